//===- NoMpi.cpp - grove_comm where the runtime was built without MPI -----===//
//
// Models with collectives still run, as a world of one process; only a
// communicator over several cannot be made.
//
//===----------------------------------------------------------------------===//

#include "Communicator.h"

#include "Error.h"

grove_status grove::rt::createMpiCommunicator(const void *,
                                              const grove_comm_options &,
                                              grove_comm **) {
  return fail(GROVE_ERROR_UNSUPPORTED,
              "grove_comm_create: this runtime was built without MPI "
              "(install libopenmpi-dev and rebuild; docs/distributed.md)");
}
