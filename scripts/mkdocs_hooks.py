"""MkDocs hooks for Parley's site (mkdocs.yml names this file).

The guides live in docs/, but ARCHITECTURE.md, SECURITY.md, BENCHMARKS.md, RELIABILITY.md and
THIRD-PARTY.md stay at the root of the repository, where people and tools look for them. This
hook makes them pages of the site under project/ and rewrites every relative link by where it
points in the repository, so one link works both when reading the files in the repository and
on the site:

  - to a page of the site (docs/… or one of the root pages): a link to that page;
  - to any other file that exists (a source file, an example): its path as code, since the site
    does not serve it;
  - to a file that does not exist: a warning, which `mkdocs build --strict` turns into a failure.
"""
import logging
import os
import posixpath
import re

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.plugins.parley")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT_PAGES = ["ARCHITECTURE.md", "SECURITY.md", "BENCHMARKS.md", "RELIABILITY.md", "THIRD-PARTY.md"]
PREFIX = "project/"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")
FENCE = re.compile(r"^(```|~~~)", re.MULTILINE)


def on_files(files, config):
    for name in ROOT_PAGES:
        files.append(File.generated(config, PREFIX + name, abs_src_path=os.path.join(ROOT, name)))
    return files


def repository_path(src_uri):
    """Where a page of the site lives in the repository."""
    return src_uri[len(PREFIX):] if src_uri.startswith(PREFIX) else "docs/" + src_uri


def site_path(repo_path):
    """The page of the site a repository file is, or None."""
    if repo_path.startswith("docs/"):
        return repo_path[len("docs/"):]
    if repo_path in ROOT_PAGES:
        return PREFIX + repo_path
    return None


def on_page_markdown(markdown, page, config, files):
    src_uri = page.file.src_uri
    here = posixpath.dirname(repository_path(src_uri))
    site_dir = posixpath.dirname(src_uri)

    def rewrite(match):
        bang, text, target, title = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith(("#", "/")):
            return match.group(0)
        path, _, anchor = target.partition("#")
        repo_target = posixpath.normpath(posixpath.join(here, path))
        if repo_target.startswith("../"):
            log.warning("%s: link '%s' leaves the repository", repository_path(src_uri), target)
            return match.group(0)
        page_target = site_path(repo_target)
        if page_target is not None:
            relative = posixpath.relpath(page_target, site_dir or ".")
            return f"{bang}[{text}]({relative}{'#' + anchor if anchor else ''}{title})"
        if os.path.exists(os.path.join(ROOT, repo_target)):
            return f"{text} (`{repo_target}`)" if text.strip("`") != repo_target else f"`{repo_target}`"
        log.warning("%s: link '%s' points to %s, which does not exist", repository_path(src_uri), target, repo_target)
        return match.group(0)

    # Leave fenced code alone: split on fences, rewrite only the parts outside them.
    parts = re.split(r"(^(?:```|~~~)[^\n]*\n.*?^(?:```|~~~)[^\n]*$)", markdown, flags=re.MULTILINE | re.DOTALL)
    return "".join(part if i % 2 else LINK.sub(rewrite, part) for i, part in enumerate(parts))
