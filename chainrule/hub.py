"""``torch.hub``: load models from a repository's ``hubconf.py``.

``source='local'`` loads from a directory. ``source='github'`` works as in PyTorch: it
downloads the repository's archive into the hub directory (``get_dir()``) once and uses that
cache after; without a network it finds a cached ``owner_repo_branch`` directory, else fails
as urllib fails. ``load_state_dict_from_url`` loads a file already in the hub's
``checkpoints`` directory with ``chainrule.load``, which reads safetensors files (chainrule's
format); checkpoints written by ``torch.save`` (a zip of pickles) do not load yet.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

from .serialization import load as _load

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir: str | None = None


class _Progress:
    """A minimal progress bar on stderr (tqdm's interface, used when tqdm is not installed)."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs) -> None:
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _Progress


def _get_torch_home() -> str:
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, default))


def get_dir() -> str:
    """The hub's cache directory: ``set_dir``'s, else ``$TORCH_HOME/hub`` (``TORCH_HOME``
    defaults to ``$XDG_CACHE_HOME/torch``, itself ``~/.cache/torch``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use ``d`` as the hub's cache directory."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


@contextlib.contextmanager
def _add_to_sys_path(path: str):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir: str):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check_dependencies(module) -> None:
    dependencies = getattr(module, VAR_DEPENDENCY, None)
    if dependencies is not None:
        missing = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(module)
    func = getattr(module, model, None) if model in dir(module) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


# ---- GitHub repositories ---------------------------------------------------------------------


def _remove_if_exists(path: str) -> None:
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    repo_info, _, ref = github.partition(":")
    repo_owner, repo_name = repo_info.split("/")
    if ref:
        return repo_owner, repo_name, ref
    try:  # the default branch: main if the repository has one, else master
        with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
            return repo_owner, repo_name, "main"
    except HTTPError as e:
        if e.code == 404:
            return repo_owner, repo_name, "master"
        raise
    except URLError as e:
        for ref in ("main", "master"):
            if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{ref}"):
                return repo_owner, repo_name, ref
        raise RuntimeError("It looks like there is no internet connection and the repo could not "
                           f"be found in the cache ({get_dir()})") from e


def _read_url(url) -> str:
    with urlopen(url) as r:
        return r.read().decode(r.headers.get_content_charset("utf-8"))


def _validate_not_a_forked_repo(repo_owner: str, repo_name: str, ref: str) -> None:
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get(ENV_GITHUB_TOKEN)
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                   f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            url = f"{prefix}?per_page=100&page={page}"
            try:
                response = json.loads(_read_url(Request(url, headers=headers)))
            except HTTPError:
                headers.pop("Authorization", None)
                response = json.loads(_read_url(Request(url, headers=headers)))
            if not response:
                break
            if any(br["name"] == ref or br["commit"]["sha"].startswith(ref) for br in response):
                return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's "
                     "a commit from a forked repo, please call hub.load() with forked repo "
                     "directly.")


def _check_repo_is_trusted(repo_owner: str, repo_name: str, owner_name_branch: str,
                           trust_repo) -> None:
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    Path(filepath).touch()
    with open(filepath) as file:
        trusted = tuple(line.strip() for line in file)
    trusted_legacy = next(os.walk(hub_dir))[1]  # repositories downloaded before the list
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = (owner_name in trusted or owner_name_branch in trusted_legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         "repositories and as such cannot be downloaded. Do you trust this "
                         "repository and wish to add it to the trusted list of repositories "
                         "(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002  (PyTorch's type)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _safe_extract_zip(zip_file: zipfile.ZipFile, extract_to: str) -> None:
    root = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":"
                                              and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, root)


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo, verbose: bool = True,
                         skip_validation: bool = False) -> str:
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    branch = ref.replace("/", "_")
    owner_name_branch = f"{repo_owner}_{repo_name}_{branch}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, branch + ".zip")
    _remove_if_exists(cached_file)
    url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"
    try:
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        download_url_to_file(url, cached_file, progress=False)
    except HTTPError as err:
        if err.code != 300:
            raise
        warnings.warn(f"The ref {ref} is ambiguous. Perhaps it is both a tag and a branch in the "
                      "repo? Torchhub will now assume that it's a branch. You can disambiguate "
                      "tags and branches by explicitly passing refs/heads/branch_name or "
                      "refs/tags/tag_name as the ref. That might require using "
                      "skip_validation=True.", stacklevel=2)
        url = f"https://github.com/{repo_owner}/{repo_name}/zipball/refs/heads/{ref}"
        download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as archive:
        extracted = os.path.join(hub_dir, archive.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(archive, hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


# ---- entry points ----------------------------------------------------------------------------


def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """The entry points (public callables) of the GitHub repository's hubconf.py."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    with _add_to_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """The docstring of entry point ``model`` of the GitHub repository."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    with _add_to_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point ``model`` of the hubconf.py of a GitHub repository (``owner/name[:ref]``)
    or, with ``source='local'``, of a directory, with ``*args, **kwargs``."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        module = _import_hubconf(hubconf_dir)
        entry = _load_entry_from_hubconf(module, model)
        return entry(*args, **kwargs)


# ---- files -----------------------------------------------------------------------------------


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download ``url`` to ``dst`` (through a temporary file beside it), checking that the
    SHA256 of the content starts with ``hash_prefix`` when given."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115  (closed in the finally below)
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            lengths = u.info().get_all("Content-Length")
            file_size = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=file_size, disable=not progress, unit="B", unit_scale=True,
                      unit_divisor=1024) as pbar:
                while buffer := u.read(READ_DATA_CHUNK):
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                       f'"{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename: str) -> bool:
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename: str, model_dir: str, map_location, weights_only: bool):
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return _load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None,
                             weights_only: bool = False) -> dict[str, Any]:
    """Load the object saved at ``url``, downloading it into ``model_dir`` (default: the hub's
    ``checkpoints``) unless a file of that name is there already."""
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached_file, match.group(1) if match else None,
                             progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)
