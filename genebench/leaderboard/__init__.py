"""The leaderboard: validate results, submit them to a Hub dataset repo, and build the static page."""

from genebench.leaderboard.site import build_site, find_figures, leaderboard_data
from genebench.leaderboard.submissions import download_submissions, submit_runs
from genebench.leaderboard.validate import ModelRun, check_controls, check_runs, merge_runs, validate_results

__all__ = [
    "ModelRun",
    "build_site",
    "check_controls",
    "check_runs",
    "download_submissions",
    "find_figures",
    "leaderboard_data",
    "merge_runs",
    "submit_runs",
    "validate_results",
]
