# ember_add_bundle(TARGET <name> MODEL <file.onnx> BACKEND <CPU|CUDA>
#                  [NETWORK_NAME <c-identifier>] [TARGET_TRIPLE <triple>]
#                  [MCPU <cpu>] [EMBED_WEIGHTS]
#                  [CUDA_GEMM auto|cublaslt|generated]
#                  [CUDA_CONV auto|cudnn|generated]
#                  [OPTIONS <model-compiler flags>...])
#
# Runs model-compiler at build time (again only when the model or the
# compiler changes) and defines a static library target <name> whose
# include directory holds the generated <network>.h, so that
#   target_link_libraries(app PRIVATE <name>)
# is all an application needs. Without EMBED_WEIGHTS the weights file is
# <name>_WEIGHTS_FILE, a path also passed to users of the target as the
# compile definition <NETWORK_NAME>_WEIGHTS_FILE="...".
#
# CUDA bundles link the CUDA runtime (CUDA::cudart), plus cuBLASLt unless
# CUDA_GEMM is generated and cuDNN unless CUDA_CONV is generated (the
# model-compiler flags -cuda-gemm/-cuda-conv; see docs/CUDA.md). A bundle
# that ends up not calling one of them (no large MatMul, say) links it
# anyway; the header's <NAME>_USES_CUBLASLT / <NAME>_USES_CUDNN tell.
function(ember_add_bundle)
  cmake_parse_arguments(EAB "EMBED_WEIGHTS"
    "TARGET;MODEL;BACKEND;NETWORK_NAME;TARGET_TRIPLE;MCPU;CUDA_GEMM;CUDA_CONV"
    "OPTIONS" ${ARGN})
  foreach(req TARGET MODEL BACKEND)
    if(NOT EAB_${req})
      message(FATAL_ERROR "ember_add_bundle: ${req} is required")
    endif()
  endforeach()
  if(EAB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ember_add_bundle: unknown arguments: ${EAB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT EAB_BACKEND MATCHES "^(CPU|CUDA)$")
    message(FATAL_ERROR "ember_add_bundle: BACKEND must be CPU or CUDA, got '${EAB_BACKEND}'")
  endif()
  if(NOT EAB_NETWORK_NAME)
    set(EAB_NETWORK_NAME ${EAB_TARGET})
  endif()
  if(NOT EAB_NETWORK_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "ember_add_bundle: NETWORK_NAME '${EAB_NETWORK_NAME}' is not a C identifier")
  endif()
  get_filename_component(model "${EAB_MODEL}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/${EAB_TARGET}")
  set(name ${EAB_NETWORK_NAME})
  set(outputs "${dir}/${name}.o" "${dir}/${name}.h")
  set(flags -model=${model} -backend=${EAB_BACKEND} -emit-bundle=${dir}
      -network-name=${name})
  if(EAB_TARGET_TRIPLE)
    list(APPEND flags -target=${EAB_TARGET_TRIPLE})
  endif()
  if(EAB_MCPU)
    list(APPEND flags -mcpu=${EAB_MCPU})
  endif()
  if(EAB_EMBED_WEIGHTS)
    list(APPEND flags -embed-weights)
  else()
    list(APPEND outputs "${dir}/${name}.weights.bin")
  endif()
  if(EAB_CUDA_GEMM)
    list(APPEND flags -cuda-gemm=${EAB_CUDA_GEMM})
  endif()
  if(EAB_CUDA_CONV)
    list(APPEND flags -cuda-conv=${EAB_CUDA_CONV})
  endif()
  list(APPEND flags ${EAB_OPTIONS})

  if(TARGET Ember::model-compiler)
    set(compiler Ember::model-compiler)
  elseif(TARGET model-compiler)
    set(compiler model-compiler)
  else()
    message(FATAL_ERROR "ember_add_bundle: no model-compiler target; call find_package(Ember) first")
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${compiler} ${flags}
    DEPENDS ${model} ${compiler}
    COMMENT "Compiling ${EAB_MODEL} into the ${EAB_BACKEND} bundle ${name}"
    VERBATIM)
  set_source_files_properties("${dir}/${name}.o" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(${EAB_TARGET} STATIC "${dir}/${name}.o" "${dir}/${name}.h")
  set_target_properties(${EAB_TARGET} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${EAB_TARGET} INTERFACE ${dir})
  if(NOT EAB_EMBED_WEIGHTS)
    target_compile_definitions(${EAB_TARGET} INTERFACE
      ${name}_WEIGHTS_FILE="${dir}/${name}.weights.bin")
    set(${EAB_TARGET}_WEIGHTS_FILE "${dir}/${name}.weights.bin" PARENT_SCOPE)
  endif()
  if(EAB_BACKEND STREQUAL "CUDA")
    find_package(CUDAToolkit REQUIRED)
    target_link_libraries(${EAB_TARGET} INTERFACE CUDA::cudart)
    if(NOT EAB_CUDA_GEMM STREQUAL "generated")
      target_link_libraries(${EAB_TARGET} INTERFACE CUDA::cublasLt)
    endif()
    if(NOT EAB_CUDA_CONV STREQUAL "generated")
      find_library(EMBER_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR})
      if(NOT EMBER_CUDNN_LIBRARY)
        message(FATAL_ERROR "ember_add_bundle: cuDNN not found; install it or pass CUDA_CONV generated")
      endif()
      target_link_libraries(${EAB_TARGET} INTERFACE ${EMBER_CUDNN_LIBRARY})
    endif()
  endif()
endfunction()
