"""Grove from Python: compile grove models in process, call them with numpy,
PyTorch or JAX tensors without copies, and keep their state in one
safetensors checkpoint (docs/python.md).

    import grove
    lib = grove.compile(open("models/mlp/mlp.mlir").read())
    model = grove.load(lib)
    model.load("models/mlp/mlp.safetensors")
    logits = model.forward(x)          # x: any CPU array-like, float32
"""
# The compiler and runtime (grove._core) load on first use, so the model
# builder (grove.ir, grove.nn) and the ONNX importer work without them:
# build steps write models before the extension exists.
_LAZY = {
    "CompileError": "_core", "GroveError": "_core", "compile": "_compile",
    "load": "_model", "Model": "_model", "Entry": "_model",
    "ParamSpec": "_model", "TensorSpec": "_model", "trace": "_trace",
}

__all__ = ["compile", "load", "Model", "Entry", "TensorSpec", "ParamSpec",
           "CompileError", "GroveError", "ABI_VERSION", "trace", "ir", "nn",
           "onnx"]


def __getattr__(name):
    import importlib
    if name in _LAZY:
        value = getattr(importlib.import_module("." + _LAZY[name], __name__),
                        name)
    elif name in ("__version__", "ABI_VERSION"):
        from . import _core
        value = _core.runtime_version() if name == "__version__" else \
            _core.abi_version()
    elif name in ("ir", "nn", "onnx"):
        value = importlib.import_module("." + name, __name__)
    else:
        raise AttributeError(f"module 'grove' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
