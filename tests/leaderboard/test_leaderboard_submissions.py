"""Submissions through huggingface_hub against a fake Hub on 127.0.0.1: one PR per submission, merged ones read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_hub import FakeHub
from leaderboard_helpers import write_model

from genebench.errors import SubmissionError
from genebench.leaderboard import download_submissions, submit_runs, validate_results
from genebench.leaderboard.validate import MAX_FILE_BYTES

REPO = "genebench/genebench-results"


def local_files(root: Path) -> dict[str, bytes]:
    return {f"results/{p.relative_to(root).as_posix()}": p.read_bytes() for p in sorted(root.rglob("*.json"))}


def test_submit_opens_one_pull_request_with_every_file(make_results, fake_hub: FakeHub) -> None:
    root = make_results(models=("sentence-transformers/all-MiniLM-L6-v2", "ctheodoris/Geneformer"))
    commit = submit_runs(validate_results(root), REPO, endpoint=fake_hub.url)
    repo = fake_hub.repos[REPO]
    assert commit.pr_num == 1 and commit.pr_url == f"{fake_hub.url}/datasets/{REPO}/discussions/1"
    assert repo.refs["refs/pr/1"] == local_files(root)
    assert len(local_files(root)) == 2 * 10
    assert repo.refs["main"] == {}, "a submission must not touch main before it is merged"
    commits = [path for method, path in fake_hub.requests if method == "POST" and "/commit/" in path]
    assert commits == [f"/api/datasets/{REPO}/commit/main"]
    assert repo.pull_requests == ["Submit ctheodoris__Geneformer/main, sentence-transformers__all-MiniLM-L6-v2/main"]


def test_failed_upload_leaves_nothing_and_retry_succeeds(make_results, fake_hub: FakeHub) -> None:
    runs = validate_results(make_results(models=("ctheodoris/Geneformer",)))
    fake_hub.fail_next_commit = True
    with pytest.raises(SubmissionError, match="the Hub refused the commit .*nothing was committed, retry the same"):
        submit_runs(runs, REPO, endpoint=fake_hub.url)
    repo = fake_hub.repos[REPO]
    assert repo.pull_requests == [] and list(repo.refs) == ["main"] and repo.refs["main"] == {}
    assert submit_runs(runs, REPO, endpoint=fake_hub.url).pr_num == 1


def test_merged_submissions_are_read_back_and_duplicates_rejected(make_results, fake_hub: FakeHub, tmp_path) -> None:
    root = make_results()
    runs = validate_results(root)
    commit = submit_runs(runs[:2], REPO, endpoint=fake_hub.url)
    pending = submit_runs(runs[2:], REPO, endpoint=fake_hub.url)
    fake_hub.merge(REPO, commit.pr_num)
    downloaded = download_submissions(REPO, tmp_path / "hub", endpoint=fake_hub.url)
    merged = validate_results(downloaded)
    assert [run.key for run in merged] == [run.key for run in runs[:2]], "only merged pull requests are read"
    assert [run.results for run in merged] == [run.results for run in runs[:2]]
    with pytest.raises(SubmissionError, match=r"\['ctheodoris__Geneformer/main'\] already on the leaderboard"):
        submit_runs(runs[:1], REPO, endpoint=fake_hub.url)
    fake_hub.merge(REPO, pending.pr_num)
    assert len(validate_results(download_submissions(REPO, tmp_path / "hub2", endpoint=fake_hub.url))) == 3


def test_family_folds_of_a_merged_model_are_a_new_submission(make_results, fake_hub: FakeHub, tmp_path) -> None:
    paper = validate_results(make_results(models=("ctheodoris/Geneformer",)))
    fake_hub.merge(REPO, submit_runs(paper, REPO, endpoint=fake_hub.url).pr_num)
    family_root = tmp_path / "family"
    write_model(family_root, "ctheodoris/Geneformer", adapter="token", level=0.77, scheme="family")
    family = validate_results(family_root)
    assert [run.folder for run in family] == ["folds-family/ctheodoris__Geneformer/main"]
    fake_hub.merge(REPO, submit_runs(family, REPO, endpoint=fake_hub.url).pr_num)  # same key, other scheme: accepted
    merged = validate_results(download_submissions(REPO, tmp_path / "hub", endpoint=fake_hub.url))
    assert [(run.key, run.scheme) for run in merged] == [("ctheodoris__Geneformer/main", "paper"),
                                                        ("ctheodoris__Geneformer/main", "family")]
    assert [run.results for run in merged] == [run.results for run in (*paper, *family)]
    with pytest.raises(SubmissionError, match=r"\['folds-family/ctheodoris__Geneformer/main'\] already on the"):
        submit_runs(family, REPO, endpoint=fake_hub.url)


def test_missing_repo_and_empty_repo(make_results, fake_hub: FakeHub, tmp_path) -> None:
    runs = validate_results(make_results(models=("ctheodoris/Geneformer",)))
    with pytest.raises(SubmissionError, match="'genebench/nope': expected an existing Hub dataset repo"):
        submit_runs(runs, "genebench/nope", endpoint=fake_hub.url)
    with pytest.raises(SubmissionError, match="expected merged results under results/ on main, found none"):
        download_submissions(REPO, tmp_path / "hub", endpoint=fake_hub.url)


@pytest.mark.parametrize(
    ("path", "size", "match"),
    [
        ("results/../main/x.json", 10, r"path component '..': expected a name safe"),
        ("results/org__model/main/deep/x.json", 10, "expected results/<org__model>/<revision>/<task>.json"),
        ("results/folds-paper/org__model/main/x.json", 10, r"\(family folds: results/folds-family/<org__model>/"),
        ("results/org__model/main/x.json", MAX_FILE_BYTES + 1, f"expected at most {MAX_FILE_BYTES} bytes"),
    ],
)
def test_hostile_hub_files_are_rejected_before_download(fake_hub: FakeHub, tmp_path, path, size, match) -> None:
    fake_hub.create_repo("evil/results", {path: b"{" + b" " * (size - 2) + b"}"})
    with pytest.raises(SubmissionError, match=match):
        download_submissions("evil/results", tmp_path / "hub", endpoint=fake_hub.url)
    assert not (tmp_path / "evil").exists() and not any((tmp_path / "hub").rglob("*.json"))


def test_tampered_merged_file_is_rejected_on_read(make_results, fake_hub: FakeHub, tmp_path) -> None:
    root = make_results(models=("ctheodoris/Geneformer",))
    files = local_files(root)
    name = "results/ctheodoris__Geneformer/main/TF_vs_non-TF.json"
    document = json.loads(files[name])
    document["scores"]["roc_auc"]["mean"] = 0.999
    files[name] = json.dumps(document).encode()
    fake_hub.create_repo("tampered/results", files)
    with pytest.raises(SubmissionError,
                       match="TF_vs_non-TF.json: task 'TF vs non-TF': roc_auc mean 0.999 does not match"):
        validate_results(download_submissions("tampered/results", tmp_path / "hub", endpoint=fake_hub.url))
