// On/off environment variables (TILEC_BOUNDS_CHECK, TILEC_DUMP_IR, TILEC_TIME_PASSES): on as 1,
// true, yes or on and off as 0, false, no, off or empty, in any case. Anything else is an error
// naming the variable, so that a misspelling doesn't silently leave a switch off.
#pragma once

namespace tilec {

// The switch `name`, false when unset. Throws std::invalid_argument for another value.
bool env_switch(const char* name);

}  // namespace tilec
