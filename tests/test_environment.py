"""environment.yml (Binder, conda) and pyproject.toml (pip) must declare the same runtime
dependencies, or Binder breaks silently the day a new import lands."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
# pip name -> the conda-forge packages that provide it
CONDA_NAMES = {"torch": {"pytorch"}, "matplotlib": {"matplotlib", "matplotlib-base"}}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0].lower()


def _conda_names() -> set[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    return {_name(dep) for dep in env["dependencies"] if isinstance(dep, str)}


def missing_from_conda(requirements: list[str], conda: set[str]) -> list[str]:
    """The pip requirements that no conda package in ``conda`` provides."""
    return [r for r in requirements if not (CONDA_NAMES.get(_name(r), {_name(r)}) & conda)]


def test_every_runtime_dependency_is_in_environment_yml():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert missing_from_conda(project["dependencies"], _conda_names()) == []


def test_the_drift_check_sees_a_missing_package():
    assert missing_from_conda(["torch>=2", "scipy>=1.10"], {"pytorch"}) == ["scipy>=1.10"]


def test_environment_is_conda_forge_python_311_cpu_torch():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert env["name"] and env["channels"] == ["conda-forge"]
    deps = [d for d in env["dependencies"] if isinstance(d, str)]
    assert "python=3.11" in deps
    (torch,) = [d for d in deps if _name(d) == "pytorch"]
    assert torch.split()[-1].startswith("cpu"), "Binder must take the CPU-only build"


def test_postbuild_installs_clipkit_without_dependencies():
    post = (ROOT / "postBuild").read_text(encoding="utf-8")
    assert re.search(r"pip install --no-deps -e \.", post)


def test_pyproject_pins_ranges_not_exact_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    every = project["dependencies"] + sum(project["optional-dependencies"].values(), [])
    assert [r for r in every if "==" in r] == []
