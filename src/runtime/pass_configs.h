// The pass configs a compile takes: tilec's own switches ("tilec.*"), and TileLang's keys
// ("tl.*", and TVM's "tir.*", "tirx.*", "cuda.*"), so that TileLang programs' pass_configs
// work unchanged. A TileLang key with a tilec meaning becomes that switch
// ("tl.disable_tma_lower": True is "tilec.tma": False); any other is accepted, logged at
// DEBUG as having no effect, and dropped. docs/language.md has the table.
#pragma once

#include <map>
#include <string>

namespace tilec::runtime {

// `given` with each TileLang key replaced by the tilec switch it means, or dropped. Throws
// std::invalid_argument for a "tilec.*" key tilec does not read (the message lists those it
// does), a key of no known namespace, a switch whose value is not "1"/"true"/"True" or
// "0"/"false"/"False", and a TileLang key and a tilec switch (or two TileLang keys) that set
// one switch two ways.
std::map<std::string, std::string> normalized_pass_configs(const std::map<std::string, std::string>& given);

// Whether `value` (of a normalized switch) is on.
bool switch_on(const std::string& value);

}  // namespace tilec::runtime
