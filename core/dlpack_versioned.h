// dlpack_versioned.h — the core's name for abi/catalyst_dlpack.h, the public declaration of
// DLPack 1.x's versioned managed tensor (Debian 12's dlpack.h is 0.6 and lacks it), so the
// core, its tests and every program that calls the versioned functions share one layout.
#pragma once

#include "catalyst_dlpack.h"
