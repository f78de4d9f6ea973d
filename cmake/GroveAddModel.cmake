# grove_add_model(<target> <model.mlir> [NAME <c-name>] [WEIGHTS <file>]
#                 [GROVEC_FLAGS <flags>...])
#
# Compiles <model.mlir> with grovec at build time into lib<name>.a and
# <name>.h, and defines <target>, a library to link: it carries the model,
# the runtime and the header's directory. NAME defaults to <target>; with
# WEIGHTS the checked weights land next to the library as <name>.safetensors
# (path in the <target>_WEIGHTS variable).
#
# Uses GROVEC_EXECUTABLE (a path or a target) and GROVE_RUNTIME_TARGET, set by
# GroveConfig.cmake or by Grove's own build.
function(grove_add_model target model)
  cmake_parse_arguments(ARG "" "NAME;WEIGHTS" "GROVEC_FLAGS" ${ARGN})
  if(NOT ARG_NAME)
    set(ARG_NAME ${target})
  endif()
  get_filename_component(model "${model}" ABSOLUTE)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/grove_${target}")
  set(outputs "${out}/lib${ARG_NAME}.a" "${out}/${ARG_NAME}.h")
  set(flags --name=${ARG_NAME} ${ARG_GROVEC_FLAGS})
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
    ${GROVE_RUNTIME_TARGET})
endfunction()
