/* The public header compiles on its own as C99 (-std=c99 -Wall -Wextra -Werror -pedantic). */
#include "rocm_backend.h"

int main(void) {
    rb_status st = RB_STATUS_SUCCESS;
    rb_device_properties p;
    rb_tensor *t = NULL;
    rb_stream *s = NULL;
    (void)p;
    (void)t;
    (void)s;
    return (int)st + RB_VERSION_MAJOR * 0 + (int)RB_DTYPE_F32;
}
