"""One import root, `ihbench`, for the repository's top-level folders.

The repository keeps the folders the project was laid out with (`ihbench_dataset/`, `loaders/`
beside `ihbench/`), but installed they live under `ihbench` (`ihbench.dataset`,
`ihbench.loaders`), so the wheel puts one top-level package into site-packages and no generic
name such as `loaders` can shadow, or be shadowed by, another distribution's. Everything else
about the distribution is declared in setup.cfg.
"""
from setuptools import find_packages, setup

#: import name -> repository folder
MOUNTED = {"ihbench.dataset": "ihbench_dataset", "ihbench.loaders": "loaders"}

packages = find_packages(include=["ihbench", "ihbench.*"])
package_dir = {"ihbench": "ihbench"}
for name, folder in MOUNTED.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]
    package_dir[name] = folder

setup(packages=packages, package_dir=package_dir)
