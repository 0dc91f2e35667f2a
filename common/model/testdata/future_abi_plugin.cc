// A test plug-in built for a later plug-in ABI: it answers every host with
// its own version and creates nothing, as a real one would on a mismatch.

#include <cstddef>
#include <cstdint>

extern "C" __attribute__((visibility("default"))) int pstrain_create_model(
    uint32_t /*host_abi_version*/, const char* /*config*/, size_t /*config_size*/,
    const void* /*context*/, void** model, uint32_t* plugin_abi_version, char* /*error*/,
    size_t /*error_capacity*/) {
  *model = nullptr;
  *plugin_abi_version = 999;
  return 1;  // kModelPluginWrongAbiVersion
}
