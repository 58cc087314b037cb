#include "models/switch/ualink_switch.h"

namespace fabricsim::models {
FABRICSIM_REGISTER_MODEL("ualink-switch", ualink_switch);
}  // namespace fabricsim::models
