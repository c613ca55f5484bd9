"""Anthropic prompt caching over a 10-step agent run: the share of each step's prompt read from cache.

Run: ``.venv/bin/python bench/prompt_cache.py [--quick]``. Prints a table and ends with exactly one JSON
line (``{"benchmark": "prompt_cache", ...}``). It reports against a target and never passes or fails
on it; it exits non-zero only when the run itself does not complete as scripted.

What runs: the real runtime (``run_create``, tasks in-process on a throwaway SQLite database) against
the loopback fake provider speaking Anthropic's wire with prefix caching on
(``FakeProvider(prompt_cache=True, cache_min_tokens=1024)``: a request reads the longest prefix an
earlier request wrote at a ``cache_control`` breakpoint, looking back 20 blocks from each of its own,
and writes its marked prefixes of at least 1,024 tokens; see ``tests/fakes/prompt_cache.py``). The
configuration has a system prompt and snippets, a skill, one tool (``snippets_by_tag``) and the tail
note on; the model is Claude Sonnet 4 from the catalogue (minimum cacheable prompt 1,024 tokens). The
fake answers nine tool calls, then a final answer: ten steps.

Figures per step, as the run recorded them from the fake's usage: prompt tokens, cache reads and
writes, and ``read share`` = cache reads / prompt tokens. Target: from step 2 on, at least 80%.
``input cost`` prices the prompt at Anthropic's published multipliers (cache write 1.25x, cache read
0.1x the base input price) relative to sending it uncached.

Peer in the same run: the same run with no breakpoints (what every request carried before this
feature: the model's declared minimum is set beyond any prompt), where nothing is ever read from cache.
``--quick`` runs the same workload (the figures are counts, not timings).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STEPS = 10
TARGET_SHARE = 0.80
CACHE_MIN_TOKENS = 1_024
WRITE_PRICE, READ_PRICE = 1.25, 0.10  # Anthropic's multipliers of the base input price (5-minute cache)
SYSTEM_PROMPT = (
    "You help the editors of a newsroom keep the house style. Answer in short sentences, prefer plain "
    "words to jargon, and say which snippet or skill each rule comes from. "
) * 12
SNIPPET_TEXT = "Write warmly and briefly; name people by their full name at first mention. " * 14
SKILL_BODY = "\n".join(f"{n}. Prefer the active voice; cut every word that does no work." for n in range(160))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the same workload (figures are counts)")
    args = parser.parse_args()
    database = Path(tempfile.gettempdir()) / f"prompt-cache-{uuid.uuid4().hex}.sqlite3"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.pop("REDIS_URL", None)  # tasks run in-process, one step after the other
    try:
        results = measure()
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{database}{suffix}").unlink(missing_ok=True)
    report(results, quick=args.quick)


def measure() -> dict[str, list[dict[str, Any]]]:
    import logging

    import django

    logging.disable(logging.INFO)  # start-up and skill sync progress lines would break up the table
    django.setup()
    from django.core.management import call_command

    from tests.fakes.provider_server import FakeProvider

    call_command("migrate", verbosity=0)
    with tempfile.TemporaryDirectory() as skills_root:
        with FakeProvider(prompt_cache=True, cache_min_tokens=CACHE_MIN_TOKENS) as fake:
            ours = _run(fake, Path(skills_root), "ours", cache_min_tokens=None)
        with FakeProvider(prompt_cache=True, cache_min_tokens=CACHE_MIN_TOKENS) as fake:
            baseline = _run(fake, Path(skills_root), "nobreak", cache_min_tokens=10**9)
    return {"ours": ours, "no_breakpoints": baseline}


def _run(fake: Any, skills_root: Path, name: str, *, cache_min_tokens: int | None) -> list[dict[str, Any]]:
    from agents.models import AgentRun, AgentStep
    from agents.services import run_create
    from tests.fakes.provider_server import Reply

    configuration = _configuration(fake, skills_root, name, cache_min_tokens)
    calls = [
        Reply.tools((f"call_{n}", "snippets_by_tag", {"tags": [f"tone-{n % 3}"]})) for n in range(STEPS - 1)
    ]
    fake.script(*calls, Reply(text="The note follows the house style."))
    run = run_create(
        configuration=configuration,
        input_text="Draft this week's note to the newsroom about the new style rules.",
        input_data_class="public_content",
    )
    run = AgentRun.objects.get(id=run.id)
    steps = list(AgentStep.objects.filter(run=run).order_by("index"))
    if run.status != "completed" or len(steps) != STEPS or len(fake.requests) != STEPS:
        raise SystemExit(f"{name}: the run did not take {STEPS} steps ({run.status}, {len(steps)} steps)")
    return [_step_figures(step) for step in steps]


def _step_figures(step: Any) -> dict[str, Any]:
    prompt, read, written = step.reported_prompt_tokens, step.cached_tokens or 0, step.cache_write_tokens or 0
    cost = (prompt - read - written) + WRITE_PRICE * written + READ_PRICE * read
    return {
        "step": step.index + 1,
        "prompt_tokens": prompt,
        "cache_read": read,
        "cache_write": written,
        "read_share": round(read / prompt, 4),
        "input_cost": round(cost / prompt, 4),
    }


def _configuration(fake: Any, skills_root: Path, name: str, cache_min_tokens: int | None) -> Any:
    from catalog.models import Configuration, ConfigurationSkill, LlmModel, Provider
    from governance.actors import Actor
    from skills.models import SkillSource, SkillSourceKind, SkillTrustLevel
    from skills.services import skill_classify, skill_enable, skill_source_create, skill_source_sync
    from snippets.services import snippet_create

    provider = Provider.objects.create(
        identifier=f"fake-{name}",
        name="Fake Anthropic",
        kind="anthropic",
        base_url=fake.anthropic_base_url,
        trust_zone="local",
        max_retries=0,
    )
    model = LlmModel.objects.create(
        provider=provider,
        model_id="claude-sonnet-4-20250514",
        context_window=200_000,
        max_output_tokens=8_192,
        tokenizer="approximate",
        prompt_cache_min_tokens=cache_min_tokens,
    )
    actor = Actor.system("bench")
    for n in range(3):
        snippet_create(
            actor=actor,
            identifier=f"{name}-tone-{n}",
            name=f"Tone {n}",
            text=SNIPPET_TEXT,
            tag_names=[f"tone-{n}"],
            data_class="public_content",
            ceiling="external_global",
        )
    configuration = Configuration.objects.create(
        identifier=f"bench-{name}",
        name="Prompt cache bench",
        model=model,
        system_prompt=SYSTEM_PROMPT,
        system_prompt_data_class="public_content",
        system_prompt_ceiling="external_global",
        snippet_tags=["tone-0"],
        allowed_tool_groups=["content"],
        max_iterations=STEPS,
        context_usage_note="tail",
    )
    folder = skills_root / name / "house-style"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: house-style\ndescription: The house style.\n---\n{SKILL_BODY}\n"
    )
    source = skill_source_create(
        name=f"bench-{name}",
        kind=SkillSourceKind.LOCAL_FOLDER,
        path=str(skills_root / name),
        trust_level=SkillTrustLevel.FIRST_PARTY,
        default_data_class="public_content",
        default_ceiling="external_global",
    )
    skill_source_sync(source_id=source.pk)
    skill = SkillSource.objects.get(pk=source.pk).skills.get()
    skill = skill_classify(
        skill=skill,
        data_class="public_content",
        ceiling="external_global",
        enforcement="enforce",
        actor=actor,
    )
    skill_enable(skill=skill, actor=actor)
    ConfigurationSkill.objects.create(configuration=configuration, skill=skill, position=0)
    return configuration


def report(results: dict[str, list[dict[str, Any]]], *, quick: bool) -> None:
    ours, baseline = results["ours"], results["no_breakpoints"]
    print(
        f"Prompt cache over a {STEPS}-step run (fake Anthropic with prefix caching; target: ≥ 80% from step 2)"
    )
    print(
        f"{'step':>4} {'prompt':>8} {'read':>8} {'written':>8} {'read share':>11} {'input cost':>11} {'no breakpoints':>15}"
    )
    for mine, theirs in zip(ours, baseline, strict=True):
        print(
            f"{mine['step']:>4} {mine['prompt_tokens']:>8,} {mine['cache_read']:>8,} {mine['cache_write']:>8,} "
            f"{mine['read_share']:>10.1%} {mine['input_cost']:>10.2f}x {theirs['read_share']:>14.1%}"
        )
    later = [step["read_share"] for step in ours[1:]]
    total_prompt = sum(step["prompt_tokens"] for step in ours)
    cost_ours = sum(step["input_cost"] * step["prompt_tokens"] for step in ours) / total_prompt
    baseline_prompt = sum(step["prompt_tokens"] for step in baseline)
    cost_baseline = sum(step["input_cost"] * step["prompt_tokens"] for step in baseline) / baseline_prompt
    summary = {
        "benchmark": "prompt_cache",
        "quick": quick,
        "steps": STEPS,
        "read_share": [step["read_share"] for step in ours],
        "min_read_share_from_step_2": min(later),
        "meets_target": min(later) >= TARGET_SHARE,
        "run_input_cost": round(cost_ours, 4),
        "no_breakpoints_read_share": [step["read_share"] for step in baseline],
        "no_breakpoints_run_input_cost": round(cost_baseline, 4),
        "input_cost_vs_no_breakpoints": round(cost_ours / cost_baseline, 4),
        "per_step": ours,
    }
    print(
        f"from step 2: read share {min(later):.1%} to {max(later):.1%} (target {TARGET_SHARE:.0%}); "
        f"the run's input cost: {cost_ours:.2f}x uncached, against {cost_baseline:.2f}x without breakpoints"
    )
    print(json.dumps(summary, separators=(",", ":")))


if __name__ == "__main__":
    main()
