// plugin_entry.cpp — libcatalyst-comm-mpi.so's one exported symbol and its table: the
// communicator is this process's rank of MPI_COMM_WORLD, as mpirun sets it up.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "communicator.hpp"

namespace catalyst::mpi {
namespace {

// The allreduce switch-over and the ring's segment, from README.md's measurements: on 2 ranks
// our ring was as fast or faster at every size; from 3 ranks on, MPI_Allreduce (fewer steps
// than the ring's 2 (p - 1)) was faster below 1 MiB. The environment overrides both.
constexpr uint64_t kDefaultRingThresholdBytes = 1024 * 1024;
constexpr uint64_t kDefaultSegmentBytes = 256 * 1024;

uint64_t env_bytes(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return *end == '\0' && value > 0 ? value : fallback;
}

ctl_status* create(const ctl_host_api* host, const char* /*options*/, Communicator** out) {
  auto error = [&](ctl_status_code code, const std::string& text) {
    return host->status_create(host->context, code, text.c_str());
  };
  // Open MPI loads parts of itself with dlopen and expects libmpi's symbols to be global;
  // the core loads this plugin RTLD_LOCAL, so promote libmpi before MPI_Init.
  dlopen("libmpi.so.40", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  int initialized = 0;
  MPI_Initialized(&initialized);
  auto c = new (std::nothrow) Communicator();
  if (!c) return error(CTL_STATUS_OUT_OF_MEMORY, "out of memory");
  c->host = host;
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      delete c;
      return error(CTL_STATUS_UNSUPPORTED, "MPI_Init_thread failed (is this process started by mpirun?)");
    }
    c->initialized_mpi = true;
    if (provided < MPI_THREAD_SERIALIZED) {
      MPI_Finalize();
      delete c;
      return error(CTL_STATUS_UNSUPPORTED,
                   "this MPI does not provide MPI_THREAD_SERIALIZED (the core calls it from its communication thread)");
    }
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (MPI_Comm_dup(MPI_COMM_WORLD, &c->collectives) != MPI_SUCCESS ||
      MPI_Comm_dup(MPI_COMM_WORLD, &c->point_to_point) != MPI_SUCCESS) {
    if (c->initialized_mpi) MPI_Finalize();
    delete c;
    return error(CTL_STATUS_INTERNAL, "MPI_Comm_dup failed");
  }
  MPI_Comm_set_errhandler(c->collectives, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(c->point_to_point, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->size);
  c->ring_threshold_bytes = env_bytes("CATALYST_MPI_RING_THRESHOLD", c->size <= 2 ? 0 : kDefaultRingThresholdBytes);
  c->segment_bytes = env_bytes("CATALYST_MPI_SEGMENT", kDefaultSegmentBytes);
  const char* algorithm = std::getenv("CATALYST_MPI_ALLREDUCE");
  c->algorithm = algorithm && *algorithm ? algorithm : "auto";
  if (c->algorithm != "auto" && c->algorithm != "ring" && c->algorithm != "mpi") {
    const std::string text = "CATALYST_MPI_ALLREDUCE is \"" + c->algorithm + "\"; it takes auto, ring or mpi";
    MPI_Comm_free(&c->collectives);
    MPI_Comm_free(&c->point_to_point);
    if (c->initialized_mpi) MPI_Finalize();
    delete c;
    return error(CTL_STATUS_INVALID_ARGUMENT, text);
  }
  *out = c;
  return nullptr;
}

void destroy(Communicator* c, bool broken) {
  // After a failure, requests to a dead or stuck peer are still pending: freeing the
  // communicators or finalizing would wait for them. The process then ends without
  // MPI_Finalize, which mpirun reports (README.md, "Faults").
  if (!broken) {
    MPI_Comm_free(&c->collectives);
    MPI_Comm_free(&c->point_to_point);
    if (c->initialized_mpi) MPI_Finalize();
  }
  delete c;
}

ctl_status* rank_size(Communicator* c, uint32_t* out_rank, uint32_t* out_size) {
  *out_rank = static_cast<uint32_t>(c->rank);
  *out_size = static_cast<uint32_t>(c->size);
  return nullptr;
}

ctl_status* run(Communicator* c, const ctl_comm_call* call) {
  try {
    return run_call(*c, *call);
  } catch (const std::bad_alloc&) {
    return make_error(*c, CTL_STATUS_OUT_OF_MEMORY, "out of host memory in " + describe(*call));
  } catch (const std::exception& e) {
    return make_error(*c, CTL_STATUS_INTERNAL, std::string("internal error: ") + e.what());
  }
}

const ctl_comm_plugin_api kApi = {
    sizeof(ctl_comm_plugin_api), CTL_ABI_VERSION_MAJOR, 4, "mpi", "1.0 (Open MPI)", create, destroy, rank_size, run,
};

}  // namespace
}  // namespace catalyst::mpi

extern "C" __attribute__((visibility("default"))) const ctl_comm_plugin_api* ctl_comm_plugin_query(
    uint32_t core_abi_major, uint32_t core_abi_minor, const ctl_host_api* host) {
  if (core_abi_major != CTL_ABI_VERSION_MAJOR || core_abi_minor < 4) {
    if (host && host->log) {
      host->log(host->context, CTL_LOG_WARNING,
                "the MPI communication plugin needs a core of ABI 1.4 or later (catalyst_comm.h)");
    }
    return nullptr;
  }
  return &catalyst::mpi::kApi;
}
