#ifndef ROOST_VIPS_API_H
#define ROOST_VIPS_API_H
// The part of libvips 8's ABI (soname libvips.so.42) that roost_vips.c calls,
// declared here so that roostd neither includes glib's headers nor links
// libvips: vips_loader.c loads the library at the first image and fills
// `vipsapi` with dlsym. The prototypes are copied from libvips 8.14's headers
// (glib's gboolean is int, GType is gsize); the enum values below are checked
// against libvips' own enum tables when it loads.
#include <stddef.h>

typedef struct _VipsImage VipsImage;
typedef size_t roost_gtype;

/// libvips' ABI: vips_version(3) - vips_version(5), LIBRARY_CURRENT - AGE.
#define ROOST_VIPS_ABI 42

/// The enum values Roost passes (VipsAccess, VipsFailOn, VipsSize,
/// VipsInteresting, VipsInterpretation).
enum {
    VIPS_ACCESS_SEQUENTIAL = 1,
    VIPS_FAIL_ON_TRUNCATED = 1,
    VIPS_FAIL_ON_ERROR = 2,
    VIPS_SIZE_DOWN = 2,
    VIPS_INTERESTING_NONE = 0,
    VIPS_INTERESTING_CENTRE = 1,
    VIPS_INTERPRETATION_B_W = 1,
    VIPS_INTERPRETATION_sRGB = 22,
};
#define VIPS_META_ORIENTATION "orientation"
#define ROOST_TRUE 1

/// The libvips (and glib) functions Roost uses. The variadic ones take
/// NULL-terminated name/value pairs, as in libvips' headers.
typedef struct {
    int (*version)(int flag);
    int (*init)(const char *argv0);
    void (*vector_set_enabled)(int enabled);
    void (*concurrency_set)(int concurrency);
    void (*cache_set_max)(int max);
    void (*cache_set_max_mem)(size_t max_mem);
    void (*cache_set_max_files)(int max_files);
    int (*enum_from_nick)(const char *domain, roost_gtype type, const char *nick);
    roost_gtype (*access_get_type)(void);
    roost_gtype (*fail_on_get_type)(void);
    roost_gtype (*size_get_type)(void);
    roost_gtype (*interesting_get_type)(void);
    roost_gtype (*interpretation_get_type)(void);
    void (*error_clear)(void);
    char *(*error_buffer_copy)(void);
    void (*error)(const char *domain, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void (*g_free)(void *mem);
    void (*g_object_unref)(void *object);
    const char *(*foreign_find_load_buffer)(const void *data, size_t size);
    const char *(*foreign_find_load)(const char *filename);
    VipsImage *(*image_new_from_buffer)(const void *buf, size_t len, const char *option_string, ...);
    VipsImage *(*image_new_from_file)(const char *name, ...);
    int (*image_get_width)(const VipsImage *image);
    int (*image_get_height)(const VipsImage *image);
    int (*image_get_bands)(const VipsImage *image);
    roost_gtype (*image_get_typeof)(const VipsImage *image, const char *name);
    int (*image_get_int)(const VipsImage *image, const char *name, int *out);
    void (*image_set_int)(VipsImage *image, const char *name, int i);
    int (*image_write_to_buffer)(VipsImage *in, const char *suffix, void **buf, size_t *size, ...);
    int (*avg)(VipsImage *in, double *out, ...);
    int (*jpegsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*webpsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*pngsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*gifsave_buffer)(VipsImage *in, void **buf, size_t *len, ...);
    int (*thumbnail_image)(VipsImage *in, VipsImage **out, int width, ...);
    int (*xyz)(VipsImage **out, int width, int height, ...);
    int (*extract_band)(VipsImage *in, VipsImage **out, int band, ...);
    int (*remainder_const1)(VipsImage *in, VipsImage **out, double c, ...);
    int (*cast_uchar)(VipsImage *in, VipsImage **out, ...);
    int (*invert)(VipsImage *in, VipsImage **out, ...);
    int (*bandjoin)(VipsImage **in, VipsImage **out, int n, ...);
    int (*copy)(VipsImage *in, VipsImage **out, ...);
    void (*thread_shutdown)(void);
} roost_vips_api;

/// Filled once libvips is loaded; use only after roost_vips_ready() is true.
extern roost_vips_api vipsapi __attribute__((visibility("hidden")));

/// Loads and starts libvips once per process (safe from any thread). True
/// when it is usable; otherwise copies why not into `err`.
int roost_vips_ready(char *err, size_t errlen) __attribute__((visibility("hidden")));

#endif
