// SwiftPM builds a C target from at least one source file; the mirror's Core Location is its header alone.
#include "CoreLocation.h"
