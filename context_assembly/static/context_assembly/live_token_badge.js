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
    return element;
  }

  function number(value) {
    return value.toLocaleString("en");
  }

  function share(figures) {
    return figures.share + " (" + number(figures.estimated) + " of " + number(figures.budget) +
      " tokens; snippets " + number(figures.snippets) + ")";
  }

  function budgetSum(figures) {
    return "Prompt budget " + number(figures.budget) + " = context window " + number(figures.window) +
      " − output reserve " + number(figures.reserve) + " − safety margin " + number(figures.safety) +
      " tokens";
  }

  var CAPTION = "Each configuration that selects this snippet: the share of its prompt budget its " +
    "context takes, as saved and with this edit. The context is the system prompt, the selected " +
    "snippets, skills and tools, with a one-word task; the prompt budget is the model's context " +
    "window less the output reserve and the safety margin. All in tokens of the configuration's " +
    "model; point at a figure for its budget's sum. Nothing is saved or sent.";

  function effectsTable(anchor, configurations) {
    var table = document.getElementById("live-badge-effects");
    if (!table) {
      table = document.createElement("table");
      table.id = "live-badge-effects";
      anchor.parentNode.insertBefore(table, anchor.nextSibling);
    }
    table.textContent = "";
    var caption = document.createElement("caption");
    caption.className = "live-badge-caption";
    caption.textContent = CAPTION;
    table.appendChild(caption);
    var head = document.createElement("tr");
    ["Configuration", "Model", "Share of the prompt budget, saved", "With this edit"].forEach(function (title) {
      cell(head, title, "th");
    });
    table.appendChild(head);
    configurations.forEach(function (effect) {
      var row = document.createElement("tr");
      row.setAttribute("data-configuration", effect.configuration);
      cell(row, effect.configuration);
      cell(row, effect.model);
      cell(row, share(effect.before)).title = budgetSum(effect.before);
      cell(row, share(effect.after)).title = budgetSum(effect.after);
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
