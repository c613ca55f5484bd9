/* The live token badge: while an editor types a snippet's text or a configuration's system prompt, the
 * "Tokens" field shows what the typed text costs, and for a snippet a table shows each configuration
 * that selects it with its budget share before and after the edit. The figures come from the admin
 * endpoint named in #live-badge (agents/admin/live_badge.py), posted with the page's CSRF token so the
 * text never travels in a URL. Without JavaScript the badge of the saved text stays as it is.
 */
(function () {
  "use strict";

  var DELAY_MS = 300;

  function debounce(fn, delay) {
    var timer = null;
    return function () {
      window.clearTimeout(timer);
      timer = window.setTimeout(fn, delay);
    };
  }

  function value(id) {
    var element = document.getElementById(id);
    return element ? element.value : "";
  }

  function cell(row, text, tag) {
    var element = document.createElement(tag || "td");
    element.textContent = text;
    row.appendChild(element);
  }

  function share(figures) {
    return figures.share + " (" + figures.estimated.toLocaleString("en") + " of " +
      figures.budget.toLocaleString("en") + "; snippets " + figures.snippets.toLocaleString("en") + ")";
  }

  function effectsTable(anchor, configurations) {
    var table = document.getElementById("live-badge-effects");
    if (!table) {
      table = document.createElement("table");
      table.id = "live-badge-effects";
      anchor.parentNode.insertBefore(table, anchor.nextSibling);
    }
    table.textContent = "";
    var head = document.createElement("tr");
    ["Configuration", "Model", "Budget share before", "After the edit"].forEach(function (title) {
      cell(head, title, "th");
    });
    table.appendChild(head);
    configurations.forEach(function (effect) {
      var row = document.createElement("tr");
      row.setAttribute("data-configuration", effect.configuration);
      cell(row, effect.configuration);
      cell(row, effect.model);
      cell(row, share(effect.before));
      cell(row, share(effect.after));
      table.appendChild(row);
    });
    table.hidden = configurations.length === 0;
  }

  function start() {
    var config = document.getElementById("live-badge");
    var badge = document.querySelector(".field-tokens .readonly");
    if (!config || !badge) {
      return;
    }
    var kind = config.getAttribute("data-kind");
    var source = document.getElementById(kind === "snippet" ? "id_text" : "id_system_prompt");
    var csrf = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (!source || !csrf) {
      return;
    }
    var sent = 0;
    var update = debounce(function () {
      var body = new URLSearchParams();
      body.set("kind", kind);
      body.set("object_id", config.getAttribute("data-object") || "");
      body.set("text", source.value);
      if (kind === "snippet") {
        ["name", "identifier", "sorting", "tag_names"].forEach(function (field) {
          body.set(field, value("id_" + field));
        });
      } else {
        body.set("model", value("id_model"));
      }
      var ticket = ++sent;
      window.fetch(config.getAttribute("data-url"), {
        method: "POST",
        credentials: "same-origin",
        headers: {"X-CSRFToken": csrf.value},
        body: body
      }).then(function (response) {
        return response.ok ? response.json() : null;
      }).then(function (answer) {
        if (!answer || ticket !== sent) {
          return; // a later keystroke's answer is on its way, or this one failed: keep what is shown
        }
        badge.textContent = answer.badge.label;
        badge.setAttribute("data-live", "true");
        if (kind === "snippet") {
          effectsTable(badge, answer.configurations);
        }
      });
    }, DELAY_MS);
    ["id_text", "id_system_prompt", "id_name", "id_tag_names", "id_sorting", "id_model"].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) {
        element.addEventListener("input", update);
        element.addEventListener("change", update);
      }
    });
    update();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
