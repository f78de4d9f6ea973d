"""Grove from Python: compile grove models in process, call them with numpy,
PyTorch or JAX tensors without copies, and keep their state in one
safetensors checkpoint (docs/python.md).

    import grove
    lib = grove.compile(open("models/mlp/mlp.mlir").read())
    model = grove.load(lib)
    model.load("models/mlp/mlp.safetensors")
    logits = model.forward(x)          # x: any CPU array-like, float32
"""
from ._core import CompileError, GroveError
from ._core import abi_version as _abi_version
from ._core import runtime_version as _runtime_version
from ._compile import compile
from ._model import Entry, Model, ParamSpec, TensorSpec, load
from ._trace import trace

__version__ = _runtime_version()
ABI_VERSION = _abi_version()

__all__ = ["compile", "load", "Model", "Entry", "TensorSpec", "ParamSpec",
           "CompileError", "GroveError", "ABI_VERSION", "trace"]
