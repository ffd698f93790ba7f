#ifndef ROOST_CVIPS_SHIM_H
#define ROOST_CVIPS_SHIM_H
// libvips and glib. Swift code does not import this module directly: it calls
// the non-variadic wrappers in CVipsShim, whose header has no glib types.
#include <vips/vips.h>
#endif
