#ifndef ACCEL_EXPORTERS_TORCHTITAN_DEFAULTS_H_
#define ACCEL_EXPORTERS_TORCHTITAN_DEFAULTS_H_

namespace accel::exporters {

// The JSON text of torchtitan's Trainer.Config() at its defaults in to_dict() form (every
// field, in field order): the skeleton the torchtitan writer fills in, so its output has the
// shape of a real --debug.save_config_file dump.
const char* TorchtitanDefaultDump();

}  // namespace accel::exporters

#endif  // ACCEL_EXPORTERS_TORCHTITAN_DEFAULTS_H_
