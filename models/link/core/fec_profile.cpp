#include "models/link/core/fec_profile.h"

namespace fabricsim::link {

FecMenu default_fec_menu() {
  return {
      {"LOW", 0.0, 0, 0},
      {"LIGHT", 0.025, 5000, 4},
      {"STRONG", 0.0625, 12000, 15},
  };
}

}  // namespace fabricsim::link
