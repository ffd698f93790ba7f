#ifndef ROOST_VIPS_H
#define ROOST_VIPS_H
// Non-variadic wrappers around the libvips calls Roost uses. Swift cannot
// call C variadic functions, and this header keeps glib types out of Swift.
// roostd does not link libvips: the first call loads it (dlopen), and every
// call fails with the reason when it cannot be loaded.
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Output encodings for thumbnails.
enum roost_vips_format { ROOST_VIPS_JPEG = 0, ROOST_VIPS_WEBP = 1, ROOST_VIPS_PNG = 2, ROOST_VIPS_GIF = 3 };

/// What a header read reveals, without decoding pixels.
typedef struct {
    int width;
    int height;
    int bands;
    /// The libvips loader's nickname, e.g. "pngload_buffer".
    char loader[64];
} roost_vips_header;

/// Loads and starts libvips once per process (thread-safe): dlopen of
/// libvips.so.42 (or the file named by the environment variable
/// ROOST_LIBVIPS), an ABI check, vips_init, one thread per operation, the
/// operation cache off. Returns 0, or -1 with the reason (naming the library)
/// in `err`; a failure is final for the process. Later calls only report.
int roost_vips_start(char *err, size_t errlen);

/// Non-zero once libvips is loaded and started; never loads it.
int roost_vips_loaded(void);

/// The library name or path roost_vips_start opens.
const char *roost_vips_library(void);

/// Reads the image header in `buf`. Returns 0, or -1 with a message in `err`.
int roost_vips_probe(const void *buf, size_t len, roost_vips_header *out, char *err, size_t errlen);

/// Decodes every pixel of the image in `buf` (JPEG with shrink-on-load, which
/// still reads the whole entropy-coded stream) and fails on truncated or
/// corrupt data. Returns 0, or -1 with a message in `err`.
int roost_vips_validate(const void *buf, size_t len, char *err, size_t errlen);

/// Makes a thumbnail of the image file at `path` that fits `width` x `height`
/// (or fills it and crops the centre when `crop` is non-zero), never
/// enlarging, and encodes it as `format` with `quality`. On success returns 0,
/// sets `*out` (free with roost_vips_free), `*out_len`, `*out_width`, `*out_height`.
int roost_vips_thumbnail_file(const char *path, int width, int height, int crop, int format, int quality,
                              void **out, size_t *out_len, int *out_width, int *out_height,
                              char *err, size_t errlen);

/// Makes a `width` x `height` RGB test picture (a gradient) encoded as `format`.
int roost_vips_synthesize(int width, int height, int format, void **out, size_t *out_len, char *err, size_t errlen);

/// For tests: a `width` x `height` gradient with `bands` bands (1 grey, 3 RGB or
/// 4 RGBA), stacked `pages` times as an animation when `pages` > 1, written
/// with a libvips save suffix such as ".jpg[interlace]" or ".webp[lossless]".
int roost_vips_test_encode(int width, int height, int bands, int pages, const char *suffix,
                           void **out, size_t *out_len, char *err, size_t errlen);

/// Frees a buffer returned by this library.
void roost_vips_free(void *p);

/// Frees libvips' per-thread state; call when a worker thread ends.
void roost_vips_thread_end(void);

#ifdef __cplusplus
}
#endif
#endif
