// The public header compiles on its own as C++17 (-std=c++17 -Wall -Wextra -Werror -pedantic).
#include "rocm_backend.h"

int main() {
    rb_status st = RB_STATUS_SUCCESS;
    rb_device_properties p{};
    rb_tensor *t = nullptr;
    rb_stream *s = nullptr;
    (void)p;
    (void)t;
    (void)s;
    return static_cast<int>(st) + RB_VERSION_MAJOR * 0 + static_cast<int>(RB_DTYPE_F32);
}
