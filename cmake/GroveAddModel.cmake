# grove_add_model(<target> <model.mlir> [NAME <c-name>] [WEIGHTS <file>]
#                 [TARGET host|cuda] [GROVEC_FLAGS <flags>...])
#
# Compiles <model.mlir> with grovec at build time into lib<name>.a and
# <name>.h, and defines <target>, a library to link: it carries the model,
# the runtime and the header's directory. NAME defaults to <target>; with
# WEIGHTS the checked weights land next to the library as <name>.safetensors
# (path in the <target>_WEIGHTS variable).
#
# TARGET cuda compiles for the GPU (grovec --target=cuda) and links the CUDA
# runtime (libgrove_rt_cuda with cuBLAS and cudart) instead.
#
# Uses GROVEC_EXECUTABLE (a path or a target), GROVE_RUNTIME_TARGET and
# GROVE_CUDA_RUNTIME_TARGET, set by GroveConfig.cmake or by Grove's own build.
function(grove_add_model target model)
  cmake_parse_arguments(ARG "" "NAME;WEIGHTS;TARGET" "GROVEC_FLAGS" ${ARGN})
  if(NOT ARG_TARGET)
    set(ARG_TARGET host)
  endif()
  set(runtime ${GROVE_RUNTIME_TARGET})
  if(ARG_TARGET STREQUAL "cuda")
    if(NOT GROVE_CUDA_RUNTIME_TARGET)
      message(FATAL_ERROR "grove_add_model(${target} ... TARGET cuda): this "
        "Grove was built without the CUDA target")
    endif()
    set(runtime ${GROVE_CUDA_RUNTIME_TARGET})
  elseif(NOT ARG_TARGET STREQUAL "host")
    message(FATAL_ERROR "grove_add_model(${target}): unknown TARGET "
      "'${ARG_TARGET}' (expected host or cuda)")
  endif()
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  get_filename_component(model "${model}" ABSOLUTE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/grove_${target}")
  set(outputs "${out}/lib${ARG_NAME}.a" "${out}/${ARG_NAME}.h")
  set(flags --name=${ARG_NAME} --target=${ARG_TARGET} ${ARG_GROVEC_FLAGS})
  set(deps "${model}")
  if(ARG_WEIGHTS)
    get_filename_component(weights "${ARG_WEIGHTS}" ABSOLUTE)
    list(APPEND flags --weights=${weights})
    list(APPEND outputs "${out}/${ARG_NAME}.safetensors")
    list(APPEND deps "${weights}")
    set(${target}_WEIGHTS "${out}/${ARG_NAME}.safetensors" PARENT_SCOPE)
  endif()
  if(TARGET ${GROVEC_EXECUTABLE})
    list(APPEND deps ${GROVEC_EXECUTABLE})
    set(grovec $<TARGET_FILE:${GROVEC_EXECUTABLE}>)
  else()
    set(grovec ${GROVEC_EXECUTABLE})
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${grovec} "${model}" -o "${out}" ${flags}
    DEPENDS ${deps}
    COMMENT "grovec ${ARG_NAME}: ${model}"
    VERBATIM)
  add_custom_target(${target}_compile DEPENDS ${outputs})
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_compile)
  target_include_directories(${target} INTERFACE "${out}")
  target_link_libraries(${target} INTERFACE "${out}/lib${ARG_NAME}.a"
    ${runtime})
endfunction()
