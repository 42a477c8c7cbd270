"""A fake Hugging Face Hub on 127.0.0.1: just the endpoints huggingface_hub 2.4 calls to commit and read files.

Model repos (read only, one commit, `MODEL_COMMIT`; regular files):
- GET  /api/models/{repo}[/revision/{rev}]      -> id, sha and the file list (siblings)
- GET  /api/models/{repo}/tree/{rev}            -> every file (the listing is always recursive)
- HEAD/GET /{repo}/resolve/{rev}/{path}

Dataset repos (regular, non-LFS files):
- POST /api/datasets/{repo}/preupload/{rev}   -> every file "regular"
- POST /api/datasets/{repo}/commit/{rev}      -> ndjson header + file ops; `?create_pr=1` opens refs/pr/N
- GET  /api/datasets/{repo}/tree/{rev}[/path] -> listing (recursive or not), 404 EntryNotFound / RepoNotFound
- HEAD/GET /datasets/{repo}/resolve/{rev}/{path}
- POST /api/repos/create                      -> a new empty dataset repo (409 if it exists)
- POST /api/validate-yaml                      -> no errors (the card's YAML is checked before a commit)
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

MODEL_COMMIT = hashlib.sha1(b"model").hexdigest()


@dataclass
class FakeRepo:
    """A repo's branches: ref name -> {path: bytes}."""

    refs: dict[str, dict[str, bytes]] = field(default_factory=lambda: {"main": {}})
    pull_requests: list[str] = field(default_factory=list)
    commits: int = 0


class FakeHub:
    """State of the fake Hub plus the server serving it; use as a context manager."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.models: dict[str, dict[str, bytes]] = {}
        self.requests: list[tuple[str, str]] = []
        self.fail_next_commit = False
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def create_repo(self, repo_id: str, files: dict[str, bytes] | None = None) -> None:
        """Create a dataset repo whose main branch holds `files`."""
        self.repos[repo_id] = FakeRepo(refs={"main": dict(files or {})})

    def create_model(self, repo_id: str, folder: Path) -> None:
        """Create a model repo holding the files of `folder` (as `save_pretrained` wrote them)."""
        files = [path for path in folder.rglob("*") if path.is_file()]
        self.models[repo_id] = {path.relative_to(folder).as_posix(): path.read_bytes() for path in files}

    def merge(self, repo_id: str, pr_num: int) -> None:
        """Merge pull request `pr_num` into main (what a maintainer's click does)."""
        repo = self.repos[repo_id]
        repo.refs["main"].update(repo.refs[f"refs/pr/{pr_num}"])


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, value: object, status: int = 200) -> None:
            self._send(status, json.dumps(value).encode(), {"Content-Type": "application/json"})

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(
                status, json.dumps({"error": message}).encode(), {"X-Error-Code": code, "X-Error-Message": message}
            )

        def _route(self) -> tuple[str, FakeRepo | None, str, str, dict[str, list[str]]]:
            """(kind, repo, revision, rest, query) for /api/datasets/<ns>/<name>/<kind>/<rev>/<rest>."""
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            segments = parts.path.strip("/").split("/")
            if segments[0] == "api":
                segments = segments[1:]
            if len(segments) < 5 or segments[0] != "datasets":
                return "", None, "", "", query
            repo_id = f"{segments[1]}/{segments[2]}"
            kind, revision = segments[3], unquote(segments[4])
            rest = unquote("/".join(segments[5:]))
            hub.requests.append((self.command, parts.path))
            return kind, hub.repos.get(repo_id), revision, rest, query

        def do_POST(self) -> None:
            if self.path.startswith("/api/repos/create"):
                return self._create_repo()
            if self.path.startswith("/api/validate-yaml"):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                return self._json({"errors": [], "warnings": []})
            kind, repo, revision, _, query = self._route()
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            if kind == "preupload":
                files = json.loads(body)["files"]
                return self._json(
                    {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]}
                )
            if kind != "commit":
                return self._error(404, "EntryNotFound", "Unknown endpoint")
            with hub.lock:
                if hub.fail_next_commit:
                    hub.fail_next_commit = False
                    return self._error(500, "InternalError", "Simulated failure while committing")
                lines = [json.loads(line) for line in body.splitlines() if line.strip()]
                files = {
                    line["value"]["path"]: base64.b64decode(line["value"]["content"])
                    for line in lines
                    if line["key"] == "file"
                }
                repo.commits += 1
                oid = hashlib.sha1(f"{repo.commits}".encode()).hexdigest()
                base = f"{hub.url}/datasets/{self.path.split('/')[3]}/{self.path.split('/')[4]}"
                if query.get("create_pr") == ["1"]:
                    repo.pull_requests.append(lines[0]["value"]["summary"])
                    number = len(repo.pull_requests)
                    repo.refs[f"refs/pr/{number}"] = {**repo.refs[revision], **files}
                    return self._json(
                        {
                            "commitUrl": f"{base}/commit/{oid}",
                            "commitOid": oid,
                            "pullRequestUrl": f"{base}/discussions/{number}",
                        }
                    )
                repo.refs[revision].update(files)
                return self._json({"commitUrl": f"{base}/commit/{oid}", "commitOid": oid})

        def _create_repo(self) -> None:
            spec = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            repo_id = f"{spec['organization']}/{spec['name']}" if spec.get("organization") else spec["name"]
            with hub.lock:
                if repo_id in hub.repos:
                    return self._error(409, "RepoExists", "You already created this dataset repo")
                hub.create_repo(repo_id)
            return self._json({"url": f"{hub.url}/datasets/{repo_id}", "name": repo_id})

        def _model(self) -> bool:
            """Answer a model-repo request; False when the path is not one."""
            segments = [unquote(s) for s in urlsplit(self.path).path.strip("/").split("/")]
            if segments[:2] == ["api", "models"] and "/".join(segments[2:4]) in hub.models:
                hub.requests.append((self.command, self.path))
                repo_id, files = "/".join(segments[2:4]), hub.models["/".join(segments[2:4])]
                if len(segments) > 5 and segments[5] not in ("main", MODEL_COMMIT):
                    self._error(404, "RevisionNotFound", f"Invalid rev id: {segments[5]}")
                elif segments[4:5] == ["tree"]:
                    self._json([{"type": "file", "path": name, "size": len(data), "oid": _oid(data)}
                                for name, data in sorted(files.items())])
                else:
                    siblings = [{"rfilename": name} for name in sorted(files)]
                    self._json({"id": repo_id, "modelId": repo_id, "sha": MODEL_COMMIT, "siblings": siblings})
                return True
            if len(segments) > 4 and segments[2] == "resolve" and "/".join(segments[:2]) in hub.models:
                hub.requests.append((self.command, self.path))
                files = hub.models["/".join(segments[:2])]
                name = "/".join(segments[4:])
                if segments[3] not in ("main", MODEL_COMMIT) or name not in files:
                    self._error(404, "EntryNotFound", f"{name} does not exist")
                else:
                    self._send(200, files[name], {"X-Repo-Commit": MODEL_COMMIT, "ETag": f'"{_oid(files[name])}"'})
                return True
            return False

        def do_GET(self) -> None:
            if self._model():
                return None
            kind, repo, revision, rest, query = self._route()
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            files = repo.refs.get(revision)
            if files is None:
                return self._error(404, "RevisionNotFound", "Revision not found")
            if kind == "tree":
                prefix = f"{rest}/" if rest else ""
                inside = {path: data for path, data in files.items() if path.startswith(prefix)}
                if rest and not inside:
                    return self._error(404, "EntryNotFound", f"{rest} does not exist")
                recursive = query.get("recursive", [""])[0].lower() == "true"
                entries, folders = [], set()
                for path, data in sorted(inside.items()):
                    tail = path[len(prefix) :]
                    if recursive or "/" not in tail:
                        entries.append({"type": "file", "path": path, "size": len(data), "oid": _oid(data)})
                    for i, char in enumerate(tail):
                        if char == "/" and (recursive or "/" not in tail[:i]):
                            folders.add(prefix + tail[:i])
                entries += [
                    {"type": "directory", "path": folder, "oid": _oid(folder.encode())} for folder in sorted(folders)
                ]
                return self._json(entries)
            if kind == "resolve":
                if rest not in files:
                    return self._error(404, "EntryNotFound", f"{rest} does not exist")
                data = files[rest]
                oid = hashlib.sha1(revision.encode()).hexdigest()
                return self._send(200, data, {"X-Repo-Commit": oid, "ETag": f'"{_oid(data)}"'})
            return self._error(404, "EntryNotFound", "Unknown endpoint")

        do_HEAD = do_GET

    return Handler


def _oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
