# Runs autograd_quickstart (cmake -DPROGRAM=... -DWORKDIR=... -P this file) and checks that it
# exits 0, prints the loss and both gradients, and writes a graph.dot with its ops.
file(REMOVE "${WORKDIR}/graph.dot")
execute_process(COMMAND "${PROGRAM}" WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "autograd_quickstart exited with ${rc}")
endif()
foreach(expected
    "loss = 0\\.5853"
    "dloss/dW = Tensor\\(shape=\\(2, 2\\), dtype=float32\\)\n\\[\\[ +0\\.7425, +0\\.6502\\],\n \\[ +1\\.4849, +1\\.3004\\]\\]"
    "dloss/db = Tensor\\(shape=\\(2\\), dtype=float32\\)\n\\[ +0\\.7425, +0\\.6502\\]"
    "wrote graph\\.dot")
  if(NOT out MATCHES "${expected}")
    message(FATAL_ERROR "output does not match: ${expected}")
  endif()
endforeach()
file(READ "${WORKDIR}/graph.dot" dot)
foreach(expected "digraph autograd" "label=\"matmul\"" "label=\"tanh\"" "label=\"sum\"" "W\\\\n\\(2, 2\\)")
  if(NOT dot MATCHES "${expected}")
    message(FATAL_ERROR "graph.dot does not contain: ${expected}")
  endif()
endforeach()
