//===- Module.cpp - grove._core: the compiler and runtime for Python ------===//
//
// The extension the `grove` package is built on (python/grove/*.py is the
// API users see): `compile` runs the compiler in process
// (grove/Compiler/Compile.h) with the GIL released, `Context` calls a
// compiled library through the runtime's C API. Errors: CompileError
// (diagnostics, `file:line:col: error: ...`) and GroveError (a runtime
// status and its message).
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "grove/Compiler/Compile.h"

#include <nanobind/stl/string.h>

#define PY_ARRAY_UNIQUE_SYMBOL grove_python_numpy_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <dlfcn.h>

using namespace grove::python;

namespace {

/// grove._core.compile(source, source_name, opt_level, cpu, name, options)
/// -> (name, object bytes, header, descriptor).
nb::tuple compile(const std::string &source, const std::string &sourceName,
                  unsigned optLevel, const std::string &cpu,
                  const std::string &name, const std::string &options,
                  nb::handle compileError) {
  mlir::grove::CompileOptions opts;
  opts.optLevel = optLevel;
  opts.cpu = cpu;
  opts.name = name;
  opts.pipelineOptions = options;
  mlir::grove::CompiledModel out;
  std::string diagnostics;
  bool ok;
  {
    nb::gil_scoped_release release;
    llvm::raw_string_ostream os(diagnostics);
    ok = mlir::succeeded(
        mlir::grove::compileSource(source, sourceName, opts, out, os));
  }
  if (!ok) {
    nb::object error = compileError(nb::str(diagnostics.c_str()));
    error.attr("diagnostics") = nb::str(diagnostics.c_str());
    PyErr_SetObject(compileError.ptr(), error.ptr());
    throw nb::python_error();
  }
  return nb::make_tuple(out.name,
                        nb::bytes(out.object.data(), out.object.size()),
                        out.header, out.descriptor);
}

} // namespace

NB_MODULE(_core, m) {
  m.doc() = "Grove's compiler and runtime (use the grove package)";
  if (_import_array() < 0)
    throw nb::python_error();
  nb::object groveError = nb::borrow(
      PyErr_NewException("grove.GroveError", PyExc_RuntimeError, nullptr));
  nb::object compileError = nb::borrow(
      PyErr_NewException("grove.CompileError", PyExc_ValueError, nullptr));
  m.attr("GroveError") = groveError;
  m.attr("CompileError") = compileError;
  nb::register_exception_translator(
      [](const std::exception_ptr &p, void *payload) {
        try {
          std::rethrow_exception(p);
        } catch (const StatusError &e) {
          auto *type = static_cast<PyObject *>(payload);
          nb::object error = nb::borrow(type)(nb::str(e.what()));
          error.attr("status") = int(e.status);
          PyErr_SetObject(type, error.ptr());
        }
      },
      groveError.ptr());

  m.def(
      "compile",
      [compileError](const std::string &source, const std::string &sourceName,
                     unsigned optLevel, const std::string &cpu,
                     const std::string &name, const std::string &options) {
        return compile(source, sourceName, optLevel, cpu, name, options,
                       compileError);
      },
      nb::arg("source"), nb::arg("source_name"), nb::arg("opt_level"),
      nb::arg("cpu"), nb::arg("name"), nb::arg("options"));
  // Where the runtime this module uses lives: compiled models link it.
  m.def("runtime_library", [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<void *>(&grove_runtime_version), &info) ||
        !info.dli_fname)
      throw StatusError(GROVE_ERROR_INTERNAL, "cannot locate libgrove_rt");
    return std::string(info.dli_fname);
  });
  m.def("trace_start", [](const std::string &path) {
    check(grove_trace_start(path.c_str()), "grove_trace_start");
  });
  m.def("trace_stop", [] {
    grove_status status;
    {
      nb::gil_scoped_release release;
      status = grove_trace_stop();
    }
    check(status, "grove_trace_stop");
  });
  m.def("runtime_version", [] { return std::string(grove_runtime_version()); });
  m.def("abi_version", [] { return grove_runtime_abi_version(); });

  nb::class_<Context>(m, "Context")
      .def(nb::init<const std::string &, const std::string &,
                    const std::string &>(),
           nb::arg("library"), nb::arg("name"), nb::arg("framework"))
      .def("invoke", &Context::invoke)
      .def("entries", &Context::entries)
      .def("params", &Context::params)
      .def("access", &Context::access)
      .def("get_weight", &Context::getWeight)
      .def("set_weight", &Context::setWeight)
      .def("load_weights", &Context::loadWeights)
      .def("save_weights", &Context::saveWeights)
      .def("weights_ready", &Context::weightsReady)
      .def("last_call_pointers", &Context::lastCallPointers);
}
