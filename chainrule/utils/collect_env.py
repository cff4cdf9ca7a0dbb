"""``torch.utils.collect_env``: the environment report PyTorch asks for in bug reports, in its
layout, describing chainrule's environment: the "PyTorch version" line names chainrule's
version, and the accelerator lines say what chainrule uses (none). ``python -m
chainrule.utils.collect_env`` prints it."""

from __future__ import annotations

import json
import locale
import os
import platform
import re
import subprocess
import sys
from collections import namedtuple

from ..torch_version import __version__

__all__ = ["SystemEnv", "get_env_info", "get_pretty_env_info", "main", "run",
           "run_and_read_all", "run_and_parse_first_match", "get_pip_packages"]

SystemEnv = namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "gcc_version", "clang_version",
    "cmake_version", "os", "libc_version", "python_version", "python_platform",
    "is_cuda_available", "cuda_runtime_version", "cuda_module_loading",
    "nvidia_driver_version", "nvidia_gpu_models", "cudnn_version", "is_xpu_available",
    "pip_version", "pip_packages", "conda_packages", "hip_compiled_version",
    "hip_runtime_version", "miopen_runtime_version", "caching_allocator_config",
    "is_xnnpack_available", "cpu_info"])

# The packages the report lists: chainrule, its dependency and the libraries bug reports ask
# about.
_PIP_PATTERNS = ("chainrule", "numpy", "scipy", "mpi4py", "torch", "mypy", "flake8", "onnx",
                 "optree", "triton")


def run(command) -> tuple[int, str, str]:
    """Run ``command`` (a string through the shell, or a list); (return code, stdout,
    stderr)."""
    shell = isinstance(command, str)
    try:
        p = subprocess.run(command, capture_output=True, shell=shell, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return 1, "", str(e)
    enc = "oem" if sys.platform == "win32" else locale.getpreferredencoding()
    return (p.returncode, p.stdout.decode(enc, "replace").strip(),
            p.stderr.decode(enc, "replace").strip())


def run_and_read_all(run_lambda, command) -> str | None:
    """The output of ``command``, or None if it failed."""
    rc, out, _ = run_lambda(command)
    return out if rc == 0 else None


def run_and_parse_first_match(run_lambda, command, regex: str) -> str | None:
    """The first group of ``regex`` in the output of ``command``, or None."""
    rc, out, _ = run_lambda(command)
    if rc != 0:
        return None
    match = re.search(regex, out)
    return match.group(1) if match else None


def run_and_return_first_line(run_lambda, command) -> str | None:
    """The first line of the output of ``command``, or None."""
    rc, out, _ = run_lambda(command)
    return out.split("\n")[0] if rc == 0 else None


def get_gcc_version(run_lambda) -> str | None:
    return run_and_parse_first_match(run_lambda, "gcc --version", r"gcc (.*)")


def get_clang_version(run_lambda) -> str | None:
    return run_and_parse_first_match(run_lambda, "clang --version", r"clang version (.*)")


def get_cmake_version(run_lambda) -> str | None:
    return run_and_parse_first_match(run_lambda, "cmake --version", r"cmake (.*)")


def get_platform() -> str:
    """'linux', 'win32', 'cygwin' or 'darwin' (else sys.platform)."""
    for name in ("linux", "win32", "cygwin", "darwin"):
        if sys.platform.startswith(name):
            return name
    return sys.platform


def get_os(run_lambda) -> str | None:
    """The operating system's name and version, and the machine."""
    machine = platform.machine()
    system = get_platform()
    if system == "darwin":
        version = platform.mac_ver()[0]
        return f"macOS {version} ({machine})" if version else None
    if system in ("win32", "cygwin"):
        return f"{platform.system()} {platform.release()} ({machine})"
    if system == "linux":
        try:
            info = platform.freedesktop_os_release()
        except OSError:
            return f"{platform.system()} {platform.release()} ({machine})"
        return f"{info.get('PRETTY_NAME', info.get('NAME', 'Linux'))} ({machine})"
    return system


def get_libc_version() -> str:
    if get_platform() != "linux":
        return "N/A"
    return "-".join(platform.libc_ver())


def get_python_platform() -> str:
    return platform.platform()


def get_cpu_info(run_lambda) -> str:
    """The CPU's description: lscpu on Linux, sysctl on macOS."""
    system = get_platform()
    if system == "linux":
        command = "lscpu"
    elif system == "darwin":
        command = "sysctl -n machdep.cpu.brand_string"
    else:
        return f"{platform.processor() or 'Could not collect'}"
    return run_and_read_all(run_lambda, command) or "Could not collect"


def get_pip_packages(run_lambda, patterns=None) -> tuple[str, str | None]:
    """pip's name and the ``name==version`` lines of the packages the report lists."""
    patterns = _PIP_PATTERNS if patterns is None else patterns
    pip_version = "pip3" if sys.version_info.major == 3 else "pip"
    out = run_and_read_all(run_lambda, [sys.executable, "-mpip", "list", "--format=freeze"])
    if out is None:
        return pip_version, None
    lines = [line for line in out.splitlines()
             if any(line.lower().startswith(p) for p in patterns)]
    return pip_version, "\n".join(lines)


def get_conda_packages(run_lambda, patterns=None) -> str | None:
    conda = os.environ.get("CONDA_EXE", "conda")
    out = run_and_read_all(run_lambda, [conda, "list"])
    if out is None:
        return None
    patterns = _PIP_PATTERNS if patterns is None else patterns
    return "\n".join(line for line in out.splitlines()
                     if not line.startswith("#") and any(p in line for p in patterns))


# ---- the system probes: what the machine says (None or "N/A" where it says nothing) --------

def check_release_file(run_lambda) -> str | None:
    """The PRETTY_NAME of /etc/*-release."""
    return run_and_parse_first_match(run_lambda, "cat /etc/*-release", r'PRETTY_NAME="(.*)"')


def get_lsb_version(run_lambda) -> str | None:
    """The description ``lsb_release -a`` gives."""
    return run_and_parse_first_match(run_lambda, "lsb_release -a", r"Description:\t(.*)")


def get_mac_version(run_lambda) -> str | None:
    return run_and_parse_first_match(run_lambda, "sw_vers -productVersion", r"(.*)")


def get_windows_version(run_lambda) -> str:
    """Windows' caption, version and architecture (PowerShell's answer, in JSON)."""
    answer = run_and_read_all(
        run_lambda, 'powershell.exe "gwmi -Class Win32_OperatingSystem | Select-Object '
        '-Property Caption,OSArchitecture,Version | ConvertTo-Json"')
    try:
        info = json.loads(answer)
        answer = f"{info['Caption']} ({info['Version']} {info['OSArchitecture']})"
    except ValueError as e:
        answer += f"\n{e}"
    return answer


def _detect_linux_pkg_manager() -> str:
    """The first of dpkg, dnf, yum and zypper on the PATH ("N/A" off Linux or if none)."""
    if get_platform() != "linux":
        return "N/A"
    for manager in ("dpkg", "dnf", "yum", "zypper"):
        if run(f"which {manager}")[0] == 0:
            return manager
    return "N/A"


# How each package manager lists a package, and which field of its line is the version.
_PKG_QUERIES = {"dpkg": ("dpkg -l | grep {}", 2), "dnf": ("dnf list | grep {}", 1),
                "yum": ("yum list | grep {}", 1), "zypper": ("zypper info {} | grep Version", 2)}


def get_linux_pkg_version(run_lambda, pkg_name: str) -> str:
    """The version of an installed Linux package, as its package manager lists it."""
    manager = _detect_linux_pkg_manager()
    if manager == "N/A":
        return "N/A"
    command, field = _PKG_QUERIES[manager]
    answer = run_and_read_all(run_lambda, command.format(pkg_name))
    if not answer:
        return "N/A"
    fields = re.sub(" +", " ", answer).split(" ")
    return fields[field] if len(fields) > field else "N/A"


def get_nvidia_smi() -> str:
    """The nvidia-smi command (on Windows, its full path where it is installed)."""
    if get_platform() != "win32":
        return "nvidia-smi"
    system_root = os.environ.get("SYSTEMROOT", "C:\\Windows")
    program_files = os.environ.get("PROGRAMFILES", "C:\\Program Files")
    for candidate in (os.path.join(system_root, "System32", "nvidia-smi"),
                      os.path.join(program_files, "NVIDIA Corporation", "NVSMI", "nvidia-smi")):
        if os.path.exists(candidate):
            return f'"{candidate}"'
    return "nvidia-smi"


def get_nvidia_driver_version(run_lambda) -> str | None:
    if get_platform() == "darwin":
        return run_and_parse_first_match(run_lambda, "kextstat | grep -i cuda",
                                         r"com[.]nvidia[.]CUDA [(](.*?)[)]")
    return run_and_parse_first_match(run_lambda, get_nvidia_smi(), r"Driver Version: (.*?) ")


def get_gpu_info(run_lambda) -> str | None:
    """The GPUs ``nvidia-smi -L`` lists, without their UUIDs (None without one; on macOS, the
    accelerator's name, which chainrule has none of)."""
    if get_platform() == "darwin":
        return None
    rc, out, _ = run_lambda(get_nvidia_smi() + " -L")
    return re.sub(r" \(UUID: .+?\)", "", out) if rc == 0 else None


def get_running_cuda_version(run_lambda) -> str | None:
    """The CUDA version ``nvcc --version`` reports."""
    return run_and_parse_first_match(run_lambda, "nvcc --version", r"release .+ V(.*)")


def get_cudnn_version(run_lambda) -> str | None:
    """The cuDNN libraries on this system (several when it cannot tell which is used)."""
    system = get_platform()
    if system == "win32":
        where = os.path.join(os.environ.get("SYSTEMROOT", "C:\\Windows"), "System32", "where")
        command = f'{where} /R "{os.environ.get("CUDA_PATH", "%CUDA_PATH%")}\\bin" cudnn*.dll'
    elif system == "darwin":
        command = "ls /usr/local/cuda/lib/libcudnn*"
    else:
        command = 'ldconfig -p | grep libcudnn | rev | cut -d" " -f1 | rev'
    rc, out, _ = run_lambda(command)
    if not out or rc not in (0, 1):  # 1: not found, or no permission for some of it
        library = os.environ.get("CUDNN_LIBRARY")
        return os.path.realpath(library) if library and os.path.isfile(library) else None
    files = sorted({os.path.realpath(f) for f in out.split("\n")
                    if os.path.isfile(os.path.realpath(f))})
    if not files:
        return None
    if len(files) == 1:
        return files[0]
    return "Probably one of the following:\n" + "\n".join(files)


def get_cuda_module_loading_config() -> str:
    """CUDA_MODULE_LOADING when CUDA is available; "N/A" here (chainrule runs on the CPU)."""
    from .. import cuda

    if not cuda.is_available():
        return "N/A"
    return os.environ.get("CUDA_MODULE_LOADING", "")


def get_cachingallocator_config() -> dict[str, str]:
    """The caching allocator settings in the environment."""
    names = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
    return {name: os.environ[name] for name in names if os.environ.get(name)}


def is_xnnpack_available() -> str:
    """Whether XNNPACK is enabled, as text ("False": chainrule does not use it)."""
    from ..backends import xnnpack

    return str(xnnpack.enabled)


def get_intel_gpu_detected(run_lambda) -> str:
    """The XPU devices ("N/A": chainrule has none)."""
    from .._toplevel import _device_module

    xpu = _device_module("xpu")
    if xpu is None or xpu.device_count() == 0:
        return "N/A"
    return "\n".join(f"* [{i}] {xpu.get_device_properties(i)}"
                     for i in range(xpu.device_count()))


_INTEL_PACKAGES = {"dpkg": ("intel-opencl-icd", "libze1", "level-zero"),
                   "dnf": ("intel-opencl", "level-zero"), "yum": ("intel-opencl", "level-zero"),
                   "zypper": ("intel-opencl", "level-zero")}
_POWERSHELL_INTEL = ('powershell.exe "gwmi -Class Win32_PnpSignedDriver | where{$_.DeviceClass '
                     '-eq \\"DISPLAY\\" -and $_.Manufacturer -match \\"Intel\\"} | '
                     'Select-Object -Property DeviceName{} | ConvertTo-Json"')


def get_intel_gpu_driver_version(run_lambda) -> str:
    """The versions of Intel's GPU driver packages (Linux) or drivers (Windows)."""
    lines = []
    system = get_platform()
    if system == "linux":
        for package in _INTEL_PACKAGES.get(_detect_linux_pkg_manager(), ()):
            version = get_linux_pkg_version(run_lambda, package)
            if version != "N/A":
                lines.append(f"* {package}:\t{version}")
    if system in ("win32", "cygwin"):
        answer = run_and_read_all(run_lambda,
                                  _POWERSHELL_INTEL.replace("{}", ",DriverVersion,DriverDate"))
        try:
            found = json.loads(answer)
            for driver in found if isinstance(found, list) else [found]:
                name = f"{driver['DeviceName']}: " if isinstance(found, list) else ""
                lines.append(f"* {name}{driver['DriverVersion']} ({driver['DriverDate']})")
        except ValueError as e:
            lines += [answer, str(e)]
    return "\n".join(lines)


def get_intel_gpu_onboard(run_lambda) -> str:
    """The Intel GPUs ``xpu-smi`` (Linux) or Windows' driver list names."""
    lines: list[str] = []
    system = get_platform()
    if system == "linux":
        answer = run_and_read_all(run_lambda, "xpu-smi discovery -j")
        if not answer:
            return "N/A"
        try:
            devices = json.loads(answer).get("device_list", [])
            lines += [f"* {d['device_name']}" for d in devices] \
                if isinstance(devices, list) and devices else ["N/A"]
        except (ValueError, TypeError) as e:
            lines += [answer, str(e)]
    if system in ("win32", "cygwin"):
        answer = run_and_read_all(run_lambda, _POWERSHELL_INTEL.replace("{}", ""))
        if not answer:
            return "N/A"
        try:
            found = json.loads(answer)
            lines += [f"* {d['DeviceName']}" for d in found] \
                if isinstance(found, list) and found else [f"* {found.get('DeviceName', 'N/A')}"]
        except ValueError as e:
            lines += [answer, str(e)]
    return "\n".join(lines)


def get_env_info() -> SystemEnv:
    """The environment as a SystemEnv."""
    pip_version, pip_list = get_pip_packages(run)
    return SystemEnv(
        torch_version=f"chainrule {__version__}", is_debug_build="False",
        cuda_compiled_version="N/A", gcc_version=get_gcc_version(run),
        clang_version=get_clang_version(run), cmake_version=get_cmake_version(run),
        os=get_os(run), libc_version=get_libc_version(),
        python_version=f"{sys.version.replace(os.linesep, ' ')} "
                       f"({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=get_python_platform(), is_cuda_available="False",
        cuda_runtime_version="N/A", cuda_module_loading="N/A", nvidia_driver_version="N/A",
        nvidia_gpu_models="N/A", cudnn_version="N/A", is_xpu_available="False",
        pip_version=pip_version, pip_packages=pip_list,
        conda_packages=get_conda_packages(run), hip_compiled_version="N/A",
        hip_runtime_version="N/A", miopen_runtime_version="N/A",
        caching_allocator_config="N/A", is_xnnpack_available="False",
        cpu_info=get_cpu_info(run))


_FORMAT = """
PyTorch version: {torch_version}
Is debug build: {is_debug_build}
CUDA used to build PyTorch: {cuda_compiled_version}
ROCM used to build PyTorch: {hip_compiled_version}

OS: {os}
GCC version: {gcc_version}
Clang version: {clang_version}
CMake version: {cmake_version}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Is CUDA available: {is_cuda_available}
CUDA runtime version: {cuda_runtime_version}
CUDA_MODULE_LOADING set to: {cuda_module_loading}
GPU models and configuration: {nvidia_gpu_models}
Nvidia driver version: {nvidia_driver_version}
cuDNN version: {cudnn_version}
Is XPU available: {is_xpu_available}
HIP runtime version: {hip_runtime_version}
MIOpen runtime version: {miopen_runtime_version}
Is XNNPACK available: {is_xnnpack_available}
Caching allocator config: {caching_allocator_config}

CPU:
{cpu_info}

Versions of relevant libraries:
{pip_packages}
{conda_packages}
""".strip()


def _prefixed(prefix: str, text: str | None) -> str:
    if not text:
        return f"[{prefix}] Could not collect"
    return "\n".join(f"[{prefix}] {line}" for line in text.split("\n"))


def pretty_str(envinfo: SystemEnv) -> str:
    """The report of ``envinfo`` in PyTorch's layout."""
    fields = {k: "Could not collect" if v is None else v for k, v in envinfo._asdict().items()}
    fields["pip_packages"] = _prefixed(envinfo.pip_version, envinfo.pip_packages)
    fields["conda_packages"] = _prefixed("conda", envinfo.conda_packages)
    return _FORMAT.format(**fields)


def get_pretty_env_info() -> str:
    """The environment report as printed by ``main``."""
    return pretty_str(get_env_info())


def main() -> None:
    """Print the environment report."""
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
