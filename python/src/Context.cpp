//===- Context.cpp - A loaded model library and its context ---------------===//

#include "Context.h"

// The numpy C API's table is imported once, by Module.cpp.
#define NO_IMPORT_ARRAY
#define PY_ARRAY_UNIQUE_SYMBOL grove_python_numpy_api
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <dlfcn.h>

#include <vector>

using namespace grove::python;

namespace {

/// Array-likes the runtime takes: on the CPU, compact row-major (a strided
/// one is copied by nanobind's conversion; a compact one never is).
using Input = nb::ndarray<nb::device::cpu, nb::c_contig>;

/// The runtime's view of a compact CPU array (no copy).
DLTensor toDLTensor(const Input &array) {
  nb::dlpack::dtype d = array.dtype();
  return DLTensor{array.data(),
                  DLDevice{kDLCPU, 0},
                  int32_t(array.ndim()),
                  DLDataType{d.code, d.bits, d.lanes},
                  const_cast<int64_t *>(array.shape_ptr()),
                  nullptr,
                  0};
}

/// The DLPack dtype of a buffer-protocol format (native byte order), or
/// false.
bool dtypeOfFormat(const char *format, Py_ssize_t itemsize, DLDataType &out) {
  if (!format)
    return false;
  if (*format == '@' || *format == '=' || *format == '<')
    ++format;
  if (!format[0] || format[1])
    return false;
  uint8_t code;
  switch (format[0]) {
  case 'e':
  case 'f':
  case 'd':
    code = kDLFloat;
    break;
  case 'b':
  case 'h':
  case 'i':
  case 'l':
  case 'q':
    code = kDLInt;
    break;
  case 'B':
    code = kDLUInt;
    break;
  case '?':
    code = GROVE_DL_BOOL;
    break;
  default:
    return false;
  }
  out = DLDataType{code, uint8_t(itemsize * 8), 1};
  return true;
}

/// numpy's dtype for bf16: ml_dtypes' (numpy has none), or null where
/// ml_dtypes is not installed.
PyArray_Descr *bfloat16Descr() {
  static PyObject *descr = [] {
    PyObject *module = PyImport_ImportModule("ml_dtypes");
    PyObject *type =
        module ? PyObject_GetAttrString(module, "bfloat16") : nullptr;
    PyArray_Descr *d = nullptr;
    if (!type || !PyArray_DescrConverter(type, &d))
      PyErr_Clear();
    Py_XDECREF(type);
    Py_XDECREF(module);
    return reinterpret_cast<PyObject *>(d);
  }();
  return reinterpret_cast<PyArray_Descr *>(descr);
}

/// torch.Tensor where torch is already imported (never imported here),
/// else null.
PyObject *torchTensorType() {
  static PyObject *type = nullptr;
  if (!type) {
    PyObject *modules = PyImport_GetModuleDict();
    PyObject *torch = PyDict_GetItemString(modules, "torch");
    if (torch)
      type = PyObject_GetAttrString(torch, "Tensor"); // kept for good
    if (!type)
      PyErr_Clear();
  }
  return type;
}

/// torch.from_numpy, looked up once (a torch output implies torch is
/// imported); kept for good, as the type above.
nb::handle torchFromNumpy() {
  static PyObject *fn = [] {
    PyObject *torch = PyImport_ImportModule("torch");
    PyObject *f = torch ? PyObject_GetAttrString(torch, "from_numpy") : nullptr;
    Py_XDECREF(torch);
    if (!f)
      throw nb::python_error();
    return f;
  }();
  return fn;
}

/// The arrays a call reads, as DLTensors, without copies where they are
/// compact: the buffer protocol first (numpy's fast path: no DLPack capsule
/// a call), then numpy's bfloat16 (ml_dtypes), then nanobind's DLPack import
/// (torch, JAX; it copies a strided array). Everything is held until the
/// views go.
class InputViews {
public:
  ~InputViews() {
    for (Py_buffer &view : views)
      PyBuffer_Release(&view);
  }
  /// `object` as a DLTensor, or false (not an array on the CPU).
  bool add(nb::handle object, DLTensor &out) {
    if (view(object, out) || bfloat16View(object, out) ||
        torchView(object, out))
      return true;
    Input array;
    if (!nb::try_cast(object, array))
      return false;
    arrays.push_back(array);
    out = toDLTensor(array);
    return true;
  }

private:
  /// A CPU torch tensor through its numpy view (`Tensor.numpy()`, no copy),
  /// cheaper than torch 1.13's `__dlpack__`. A tensor that requires grad
  /// is read through `detach()` (Grove takes no part in torch's autograd);
  /// one numpy cannot view (bf16) goes to DLPack.
  bool torchView(nb::handle object, DLTensor &out) {
    PyObject *tensorType = torchTensorType();
    if (!tensorType ||
        !PyObject_TypeCheck(object.ptr(),
                            reinterpret_cast<PyTypeObject *>(tensorType)))
      return false;
    PyObject *array = PyObject_CallMethod(object.ptr(), "numpy", nullptr);
    if (!array) {
      PyErr_Clear();
      PyObject *detached = PyObject_CallMethod(object.ptr(), "detach", nullptr);
      array =
          detached ? PyObject_CallMethod(detached, "numpy", nullptr) : nullptr;
      Py_XDECREF(detached);
      if (!array) {
        PyErr_Clear();
        return false;
      }
    }
    nb::object owned = nb::steal(array);
    if (!view(owned, out))
      return false;
    kept.push_back(std::move(owned));
    return true;
  }

  /// `object`'s compact data through the buffer protocol, or false (no
  /// buffer, not compact, or a dtype the format does not say).
  bool view(nb::handle object, DLTensor &out) {
    if (!PyObject_CheckBuffer(object.ptr()))
      return false;
    Py_buffer view;
    if (PyObject_GetBuffer(object.ptr(), &view,
                           PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      PyErr_Clear();
      return false;
    }
    DLDataType dtype;
    static_assert(sizeof(Py_ssize_t) == sizeof(int64_t));
    if (!dtypeOfFormat(view.format, view.itemsize, dtype)) {
      PyBuffer_Release(&view);
      return false;
    }
    views.push_back(view);
    out = DLTensor{view.buf,
                   DLDevice{kDLCPU, 0},
                   int32_t(view.ndim),
                   dtype,
                   reinterpret_cast<int64_t *>(view.shape),
                   nullptr,
                   0};
    return true;
  }

  /// A compact numpy array of ml_dtypes' bfloat16, which has no buffer
  /// format (and numpy 1.x no DLPack code) to say so.
  bool bfloat16View(nb::handle object, DLTensor &out) {
    PyArray_Descr *bf16 = bfloat16Descr();
    if (!bf16 || !PyArray_Check(object.ptr()))
      return false;
    auto *array = reinterpret_cast<PyArrayObject *>(object.ptr());
    if (!PyArray_EquivTypes(PyArray_DESCR(array), bf16) ||
        !PyArray_IS_C_CONTIGUOUS(array))
      return false;
    static_assert(sizeof(npy_intp) == sizeof(int64_t));
    kept.push_back(nb::borrow(object));
    out = DLTensor{PyArray_DATA(array),
                   DLDevice{kDLCPU, 0},
                   int32_t(PyArray_NDIM(array)),
                   DLDataType{kDLBfloat, 16, 1},
                   reinterpret_cast<int64_t *>(PyArray_DIMS(array)),
                   nullptr,
                   0};
    return true;
  }

  std::vector<Py_buffer> views;
  std::vector<nb::object> kept;
  std::vector<Input> arrays;
};

nb::tuple dtypeOf(DLDataType t) {
  return nb::make_tuple(int(t.code), int(t.bits), int(t.lanes));
}

nb::tuple signatureOf(const grove_tensor_sig &sig) {
  nb::list shape;
  for (int32_t d = 0; d < sig.ndim; ++d)
    shape.append(sig.shape[d]);
  return nb::make_tuple(sig.name, dtypeOf(sig.dtype), nb::tuple(shape));
}

/// Deletes the runtime's tensor when the last array viewing it goes.
void releaseTensor(void *p) noexcept {
  auto *tensor = static_cast<DLManagedTensor *>(p);
  if (tensor->deleter)
    tensor->deleter(tensor);
}

/// numpy's type number for a DLPack dtype, or -1 (bf16: numpy has none).
int numpyType(DLDataType t) {
  if (t.lanes != 1)
    return -1;
  switch (t.code) {
  case kDLFloat:
    return t.bits == 16   ? NPY_FLOAT16
           : t.bits == 32 ? NPY_FLOAT32
           : t.bits == 64 ? NPY_FLOAT64
                          : -1;
  case kDLInt:
    return t.bits == 8    ? NPY_INT8
           : t.bits == 16 ? NPY_INT16
           : t.bits == 32 ? NPY_INT32
           : t.bits == 64 ? NPY_INT64
                          : -1;
  case kDLUInt:
    return t.bits == 8 ? NPY_UINT8 : -1;
  case GROVE_DL_BOOL:
    return t.bits == 8 ? NPY_BOOL : -1;
  default:
    return -1;
  }
}

/// A numpy array over the runtime's tensor, which `owner` frees (null: a
/// borrowed view): numpy's C API directly, a few hundred nanoseconds less a
/// call than a DLPack exchange through Python. Null for a dtype numpy
/// lacks.
bool isBfloat16(DLDataType t) {
  return t.code == kDLBfloat && t.bits == 16 && t.lanes == 1;
}

/// The descriptor of a numpy dtype for `t`, a new reference, or null.
PyArray_Descr *numpyDescr(DLDataType t) {
  if (isBfloat16(t)) {
    PyArray_Descr *d = bfloat16Descr();
    Py_XINCREF(d);
    return d;
  }
  int type = numpyType(t);
  return type < 0 ? nullptr : PyArray_DescrFromType(type);
}

nb::object numpyArray(const DLTensor &t, nb::handle owner) {
  PyArray_Descr *descr = numpyDescr(t.dtype);
  if (!descr)
    return nb::object();
  npy_intp dims[NPY_MAXDIMS], strides[NPY_MAXDIMS];
  if (t.ndim > NPY_MAXDIMS) {
    Py_DECREF(descr);
    return nb::object();
  }
  int64_t itemsize = t.dtype.bits / 8, stride = itemsize;
  for (int32_t d = t.ndim - 1; d >= 0; --d) {
    dims[d] = t.shape[d];
    strides[d] = t.strides ? t.strides[d] * itemsize : stride;
    stride *= t.shape[d];
  }
  // Steals `descr`.
  PyObject *array =
      PyArray_NewFromDescr(&PyArray_Type, descr, t.ndim, dims, strides,
                           static_cast<char *>(t.data) + t.byte_offset,
                           NPY_ARRAY_WRITEABLE, nullptr);
  if (!array)
    throw nb::python_error();
  if (owner && PyArray_SetBaseObject(reinterpret_cast<PyArrayObject *>(array),
                                     owner.inc_ref().ptr()) < 0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

template <typename F>
nb::object asFramework(void *data, size_t ndim, const size_t *shape,
                       nb::handle owner, const int64_t *strides,
                       nb::dlpack::dtype dtype) {
  return nb::cast(nb::ndarray<F>(data, ndim, shape, owner, strides, dtype,
                                 nb::device::cpu::value),
                  nb::rv_policy::reference);
}

} // namespace

void grove::python::check(grove_status status, const char *what) {
  if (status == GROVE_OK)
    return;
  const char *message = grove_last_error();
  throw StatusError(
      status,
      std::string(what) + ": " +
          (message && *message ? message : grove_status_string(status)));
}

static Framework parseFramework(const std::string &name) {
  if (name == "numpy")
    return Framework::Numpy;
  if (name == "torch")
    return Framework::Torch;
  if (name == "jax")
    return Framework::Jax;
  if (name == "dlpack")
    return Framework::DLPack;
  throw nb::value_error(
      ("unknown framework '" + name + "' (numpy, torch, jax or dlpack)")
          .c_str());
}

Context::Context(const std::string &library, const std::string &name,
                 const std::string &framework)
    : framework(parseFramework(framework)) {
  handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw StatusError(GROVE_ERROR_IO,
                      "cannot open '" + library + "': " + dlerror());
  auto *model = static_cast<const grove_model_def *>(
      dlsym(handle, (name + "_model").c_str()));
  if (!model) {
    dlclose(handle);
    throw StatusError(GROVE_ERROR_INVALID_ARGUMENT,
                      "'" + library + "' defines no model '" + name +
                          "' (no symbol " + name + "_model)");
  }
  grove_status status = grove_context_create(model, &ctx);
  if (status != GROVE_OK) {
    std::string message = grove_last_error();
    dlclose(handle);
    throw StatusError(status,
                      "cannot create a context for '" + name + "': " + message);
  }
}

Context::~Context() {
  grove_context_destroy(ctx);
  // The library stays mapped: outputs still alive free through the
  // runtime, never through it, but function pointers the runtime kept for
  // the context's lifetime are gone with the context, so closing is safe.
  if (handle)
    dlclose(handle);
}

nb::object Context::wrap(DLManagedTensor *tensor) const {
  const DLTensor &t = tensor->dl_tensor;
  nb::capsule owner(tensor, releaseTensor);
  std::vector<size_t> shape(t.shape, t.shape + t.ndim);
  void *data = static_cast<char *>(t.data) + t.byte_offset;
  nb::dlpack::dtype dtype{t.dtype.code, t.dtype.bits, t.dtype.lanes};
  switch (framework) {
  case Framework::Numpy:
    if (nb::object array = numpyArray(t, owner))
      return array;
    return asFramework<nb::numpy>(data, t.ndim, shape.data(), owner, t.strides,
                                  dtype);
  case Framework::Torch:
    // torch.from_numpy over the numpy view: cheaper than a DLPack
    // exchange; bf16 (which torch.from_numpy refuses) goes by DLPack.
    if (!isBfloat16(t.dtype))
      if (nb::object array = numpyArray(t, owner))
        return torchFromNumpy()(array);
    return asFramework<nb::pytorch>(data, t.ndim, shape.data(), owner,
                                    t.strides, dtype);
  case Framework::Jax:
    return asFramework<nb::jax>(data, t.ndim, shape.data(), owner, t.strides,
                                dtype);
  case Framework::DLPack:
    break;
  }
  return nb::cast(nb::ndarray<>(data, t.ndim, shape.data(), owner, t.strides,
                                dtype, nb::device::cpu::value),
                  nb::rv_policy::reference);
}

nb::object Context::invoke(uint32_t index, nb::args inputs) {
  const grove_entry_sig *sig = nullptr;
  check(grove_context_entry(ctx, index, &sig), "grove_context_entry");
  size_t count = nb::len(inputs);
  if (count != sig->num_inputs)
    throw StatusError(GROVE_ERROR_INVALID_ARGUMENT,
                      std::string(sig->name) + " takes " +
                          std::to_string(sig->num_inputs) + " inputs, got " +
                          std::to_string(count));
  InputViews views; // until the call returns
  std::vector<DLTensor> tensors(count);
  std::vector<const DLTensor *> pointers(count);
  for (size_t i = 0; i < count; ++i) {
    pointers[i] = &tensors[i];
    if (!views.add(inputs[i], tensors[i]))
      throw nb::type_error((std::string(sig->name) + ": input " +
                            std::to_string(i) + " ('" + sig->inputs[i].name +
                            "') is not a CPU array (DLPack or buffer protocol)")
                               .c_str());
  }
  std::vector<DLManagedTensor *> outputs(sig->num_outputs, nullptr);
  grove_status status;
  {
    nb::gil_scoped_release release;
    status = grove_invoke(ctx, sig->name, pointers.data(), count,
                          outputs.data(), outputs.size());
  }
  check(status, sig->name);
  lastInputs.clear();
  for (const DLTensor &t : tensors)
    lastInputs.push_back(reinterpret_cast<uintptr_t>(t.data));
  lastOutputs.clear();
  for (DLManagedTensor *t : outputs)
    lastOutputs.push_back(reinterpret_cast<uintptr_t>(t->dl_tensor.data) +
                          t->dl_tensor.byte_offset);
  if (outputs.size() == 1)
    return wrap(outputs[0]);
  nb::list results;
  for (DLManagedTensor *t : outputs)
    results.append(wrap(t));
  return nb::tuple(results);
}

nb::tuple Context::lastCallPointers() const {
  nb::list ins, outs;
  for (uintptr_t p : lastInputs)
    ins.append(p);
  for (uintptr_t p : lastOutputs)
    outs.append(p);
  return nb::make_tuple(ins, outs);
}

nb::list Context::entries() const {
  nb::list out;
  for (uint32_t e = 0, n = grove_context_num_entries(ctx); e < n; ++e) {
    const grove_entry_sig *sig = nullptr;
    check(grove_context_entry(ctx, e, &sig), "grove_context_entry");
    nb::list ins, outs;
    for (uint32_t i = 0; i < sig->num_inputs; ++i)
      ins.append(signatureOf(sig->inputs[i]));
    for (uint32_t i = 0; i < sig->num_outputs; ++i)
      outs.append(signatureOf(sig->outputs[i]));
    out.append(nb::make_tuple(sig->name, ins, outs));
  }
  return out;
}

nb::list Context::params() const {
  nb::list out;
  for (uint32_t p = 0, n = grove_context_num_params(ctx); p < n; ++p) {
    const grove_tensor_sig *sig = nullptr;
    grove_param_kind kind;
    check(grove_context_param(ctx, p, &sig), "grove_context_param");
    check(grove_context_param_kind(ctx, p, &kind), "grove_context_param_kind");
    nb::tuple s = signatureOf(*sig);
    out.append(nb::make_tuple(s[0], s[1], s[2],
                              kind == GROVE_PARAM_WEIGHT ? "weight" : "state"));
  }
  return out;
}

nb::list Context::access() const {
  nb::list out;
  uint32_t params = grove_context_num_params(ctx);
  for (uint32_t e = 0, n = grove_context_num_entries(ctx); e < n; ++e) {
    nb::list row;
    for (uint32_t p = 0; p < params; ++p) {
      int access = 0;
      check(grove_context_entry_access(ctx, e, p, &access),
            "grove_context_entry_access");
      row.append(access);
    }
    out.append(row);
  }
  return out;
}

nb::object Context::getWeight(const std::string &name) {
  DLTensor view;
  check(grove_context_get_weight(ctx, name.c_str(), &view),
        "grove_context_get_weight");
  // A copy: a view would dangle after the next load_weights.
  nb::object borrowed = numpyArray(view, nb::handle());
  if (!borrowed)
    throw StatusError(GROVE_ERROR_UNSUPPORTED,
                      "'" + name + "': numpy has no dtype for this param's");
  return borrowed.attr("copy")();
}

void Context::setWeight(const std::string &name, nb::object value) {
  InputViews views;
  DLTensor t;
  if (!views.add(value, t))
    throw nb::type_error(
        ("'" + name + "': not a CPU array (DLPack or buffer protocol)")
            .c_str());
  check(grove_context_set_weight(ctx, name.c_str(), &t),
        "grove_context_set_weight");
}

void Context::loadWeights(const std::string &path) {
  grove_status status;
  {
    nb::gil_scoped_release release;
    status = grove_context_load_weights(ctx, path.c_str());
  }
  check(status, "grove_context_load_weights");
}

void Context::saveWeights(const std::string &path) const {
  grove_status status;
  {
    nb::gil_scoped_release release;
    status = grove_context_save_weights(ctx, path.c_str());
  }
  check(status, "grove_context_save_weights");
}

bool Context::weightsReady() const {
  return grove_context_weights_ready(ctx) != 0;
}
