"""GitHub ingest against the loopback fake: SHA pinning, URL and redirect refusals, bounds, marketplaces."""

from __future__ import annotations

import json
import secrets

import pytest

from skills.errors import GitHubAccessDenied, GitHubRedirectRefused, GitHubUrlRefused
from skills.ingest.github_http import check_url
from skills.ingest.snapshot import SyncLimits
from skills.models import Skill, SkillAudit, SkillSource, SkillSourceKind, SyncStatus
from skills.services import skill_source_sync
from tests.skills.conftest import skill_md, source_make

REPO_URL = "https://github.com/acme/skills"


def repo_source(**fields):
    values = {"kind": SkillSourceKind.GITHUB_REPO, "url": REPO_URL, "ref": "main"}
    values.update(fields)
    return source_make(**values)


@pytest.mark.django_db
def test_ref_is_resolved_once_and_every_body_is_fetched_by_that_sha(github):
    sha = github.commit(
        "acme",
        "skills",
        {
            "skills/pdf/SKILL.md": skill_md("pdf"),
            ".claude/skills/review/SKILL.md": skill_md("review"),
            "README.md": b"# readme",
        },
    )
    source = repo_source()

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    assert github.api_paths() == [
        "/repos/acme/skills/commits/main",
        f"/repos/acme/skills/git/trees/{sha}?recursive=1",
    ]
    assert sorted(github.raw_paths()) == [
        f"/acme/skills/{sha}/.claude/skills/review/SKILL.md",
        f"/acme/skills/{sha}/skills/pdf/SKILL.md",
    ]
    assert result.status == SyncStatus.OK
    assert result.created == (".claude/skills/review/SKILL.md", "skills/pdf/SKILL.md")
    source.refresh_from_db()
    assert (source.pinned_sha, source.sync_status) == (sha, SyncStatus.OK)
    assert set(Skill.objects.values_list("source_sha", "is_enabled")) == {(sha, False)}


@pytest.mark.django_db
def test_token_is_read_from_the_named_variable_sent_and_never_stored(github, monkeypatch, settings):
    settings.SKILL_SOURCE_TOKEN_ENVS = ["SKILLS_TEST_GITHUB_TOKEN"]
    token = "tok" + secrets.token_hex(12)
    monkeypatch.setenv("SKILLS_TEST_GITHUB_TOKEN", token)
    github.commit("acme", "skills", {"skills/pdf/SKILL.md": skill_md("pdf")})
    source = repo_source(token_env="SKILLS_TEST_GITHUB_TOKEN")

    skill_source_sync(source_id=source.pk, transport=github.transport())

    assert {recorded.authorization for recorded in github.requests} == {f"Bearer {token}"}
    stored = json.dumps(
        [list(SkillSource.objects.values()), list(Skill.objects.values()), list(SkillAudit.objects.values())],
        default=str,
    )
    assert token not in stored


@pytest.mark.django_db
def test_single_file_source_arrives_enabled(github):
    sha = github.commit("acme", "skills", {"tools/pdf/SKILL.md": skill_md("pdf")})
    source = source_make(
        kind=SkillSourceKind.GITHUB_FILE, url=REPO_URL, ref="main", path="tools/pdf/SKILL.md"
    )

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    assert result.enabled_on_create == ("tools/pdf/SKILL.md",)
    assert github.raw_paths() == [f"/acme/skills/{sha}/tools/pdf/SKILL.md"]
    assert Skill.objects.get().is_enabled is True


@pytest.mark.django_db
def test_single_file_gone_at_the_new_commit_is_orphaned(github):
    github.commit("acme", "skills", {"tools/pdf/SKILL.md": skill_md("pdf")})
    source = source_make(
        kind=SkillSourceKind.GITHUB_FILE, url=REPO_URL, ref="main", path="tools/pdf/SKILL.md"
    )
    skill_source_sync(source_id=source.pk, transport=github.transport())
    github.commit("acme", "skills", {"other.md": b"moved"})

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    assert result.orphaned == ("tools/pdf/SKILL.md",)
    skill = Skill.objects.get()
    assert (skill.is_orphaned, skill.is_enabled) == (True, False)


@pytest.mark.django_db
def test_a_redirect_is_refused_and_nothing_is_stored(github):
    github.commit("acme", "skills", {"skills/pdf/SKILL.md": skill_md("pdf")})
    github.overrides["/repos/acme/skills/commits/main"] = (302, {"Location": "https://evil.example/"})
    source = repo_source()

    with pytest.raises(GitHubRedirectRefused):
        skill_source_sync(source_id=source.pk, transport=github.transport())

    assert github.api_paths() == ["/repos/acme/skills/commits/main"]
    assert Skill.objects.count() == 0
    source.refresh_from_db()
    assert source.sync_status == SyncStatus.ERROR
    assert source.last_error.startswith("github_redirect_refused:")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        "http://github.com/acme/skills",
        "https://evil.example.com/acme/skills",
        "https://github.com.evil.io/a/b",
    ],
)
def test_a_refused_url_never_reaches_any_connection(github, url):
    transport = github.transport()
    # Creation refuses such a URL; a row stored before that check (or edited since) still meets it here.
    source = repo_source()
    SkillSource.objects.filter(pk=source.pk).update(url=url)

    with pytest.raises(GitHubUrlRefused):
        skill_source_sync(source_id=source.pk, transport=transport)

    assert transport.carried == []
    assert github.requests == []
    assert Skill.objects.count() == 0
    assert SkillSource.objects.get(pk=source.pk).sync_status == SyncStatus.ERROR


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://api.github.com/repos", "Only https"),
        ("https://example.org/x", "not on the GitHub allow-list"),
        ("https://api.github.com:8443/x", "default https port"),
        ("https://" + "someone" + ":" + "pw" + "@github.com/a/b", "carrying credentials"),
        ("https://" + "someone" + "@raw.githubusercontent.com/a/b", "carrying credentials"),
    ],
)
def test_check_url_refuses_scheme_host_port_and_userinfo(url, fragment):
    with pytest.raises(GitHubUrlRefused) as caught:
        check_url(url)
    assert fragment in caught.value.message


def test_check_url_accepts_allowlisted_hosts_case_insensitively():
    assert check_url("https://API.GitHub.com/repos/a/b").host == "api.github.com"


@pytest.mark.django_db
def test_a_url_with_userinfo_on_the_source_is_refused_before_connecting(github):
    transport = github.transport()
    # Creation refuses such a URL; a row stored before that check (or edited since) still meets it here.
    source = repo_source()
    SkillSource.objects.filter(pk=source.pk).update(
        url="https://" + "someone" + ":" + "pw" + "@github.com/acme/skills"
    )

    with pytest.raises(GitHubUrlRefused):
        skill_source_sync(source_id=source.pk, transport=transport)

    assert transport.carried == []
    assert Skill.objects.count() == 0


@pytest.mark.django_db
def test_more_than_500_files_gives_a_partial_sync_saying_what_was_left(github):
    files = {f"skills/skill-{n:03d}/SKILL.md": skill_md(f"skill-{n:03d}") for n in range(501)}
    github.commit("acme", "skills", files)
    source = repo_source()

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    reason = "file limit of 500 reached: 1 of 501 discovered SKILL.md files were not fetched"
    assert (result.status, result.partial_reason, len(result.created)) == (SyncStatus.PARTIAL, reason, 500)
    assert len(github.raw_paths()) == 500
    assert Skill.objects.count() == 500
    assert not Skill.objects.filter(path="skills/skill-500/SKILL.md").exists()
    source.refresh_from_db()
    assert (source.sync_status, source.last_error) == (SyncStatus.PARTIAL, reason)


@pytest.mark.django_db
def test_the_time_budget_stops_fetching_and_reports_partial(github):
    github.commit("acme", "skills", {f"s/k{n}/SKILL.md": skill_md(f"k{n}") for n in range(3)})
    source = repo_source()
    ticks = iter(range(0, 10_000, 40))  # every clock reading is 40 s later than the previous one

    result = skill_source_sync(
        source_id=source.pk,
        transport=github.transport(),
        limits=SyncLimits(max_seconds=120, clock=lambda: next(ticks)),
    )

    assert result.status == SyncStatus.PARTIAL
    assert (
        result.partial_reason
        == "time limit of 120 s reached: 3 of 3 discovered SKILL.md files were not fetched"
    )
    assert github.raw_paths() == []
    assert Skill.objects.count() == 0


@pytest.mark.django_db
def test_a_truncated_tree_listing_orphans_nothing(github):
    github.commit("acme", "skills", {"s/a/SKILL.md": skill_md("a"), "s/b/SKILL.md": skill_md("b")})
    source = repo_source()
    skill_source_sync(source_id=source.pk, transport=github.transport())
    sha = github.commit("acme", "skills", {"s/a/SKILL.md": skill_md("a")})
    github.truncated.add(sha)

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    assert result.orphaned == ()
    assert result.partial_reason == "GitHub truncated the tree listing, so nothing was orphaned"
    assert Skill.objects.filter(is_orphaned=True).count() == 0


@pytest.mark.django_db
def test_symlinks_in_the_tree_are_never_fetched(github):
    sha = github.commit("acme", "skills", {"s/a/SKILL.md": skill_md("a")})
    github.symlinks[sha] = {"s/linked/SKILL.md"}

    skill_source_sync(source_id=repo_source().pk, transport=github.transport())

    assert github.raw_paths() == [f"/acme/skills/{sha}/s/a/SKILL.md"]


@pytest.mark.django_db
def test_rate_limiting_fails_the_sync_with_the_reset_time(github):
    github.overrides["/repos/acme/skills/commits/main"] = (
        403,
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1900000000"},
    )
    source = repo_source()

    with pytest.raises(GitHubAccessDenied) as caught:
        skill_source_sync(source_id=source.pk, transport=github.transport())

    assert caught.value.message == "GitHub refused access (403): rate limit exhausted until epoch 1900000000."
    assert Skill.objects.count() == 0


@pytest.mark.django_db
def test_a_marketplace_source_ingests_the_listed_skills_and_reports_remote_plugins(github):
    manifest = {
        "name": "acme-market",
        "plugins": [
            {"name": "docs", "source": "./", "skills": ["./skills/xlsx", "./deep/a/b/c/d/e/f/g"]},
            {"name": "tools", "source": "./plugins/tools"},
            {"name": "remote", "source": {"source": "github", "repo": "other/repo"}},
        ],
    }
    sha = github.commit(
        "acme",
        "skills",
        {
            ".claude-plugin/marketplace.json": json.dumps(manifest).encode(),
            "skills/xlsx/SKILL.md": skill_md("xlsx"),
            "skills/unlisted/SKILL.md": skill_md("unlisted"),
            "deep/a/b/c/d/e/f/g/SKILL.md": skill_md("g"),
            "plugins/tools/skills/lint/SKILL.md": skill_md("lint"),
        },
    )
    source = source_make(kind=SkillSourceKind.GITHUB_MARKETPLACE, url=REPO_URL, ref="main")

    result = skill_source_sync(source_id=source.pk, transport=github.transport())

    assert result.created == (
        "deep/a/b/c/d/e/f/g/SKILL.md",
        "plugins/tools/skills/lint/SKILL.md",
        "skills/xlsx/SKILL.md",
    )
    assert [(f.path, f.rule) for f in result.failed] == [
        (".claude-plugin/marketplace.json#remote", "plugin_skipped")
    ]
    assert result.status == SyncStatus.PARTIAL
    assert f"/acme/skills/{sha}/.claude-plugin/marketplace.json" in github.raw_paths()
