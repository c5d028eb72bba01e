/* A client built through find_package(RocmBackend): checks the version, runs a small matmul
 * + add + relu and compares with a C loop. Exits 0 on success. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rocm_backend.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        rb_status st_ = (call);                                                                    \
        if (st_ != RB_STATUS_SUCCESS) {                                                            \
            fprintf(stderr, "%s: %s: %s\n", #call, rb_status_string(st_), rb_last_error_message()); \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RB_VERSION_MAJOR, RB_VERSION_MINOR, RB_VERSION_PATCH);
    if (strcmp(want, rb_version()) != 0) {
        fprintf(stderr, "header %s, library %s\n", want, rb_version());
        return 1;
    }
    CHECK(rb_set_device("cpu"));
    float a[6] = {1, -2, 3, -4, 5, -6}, b[6] = {0.5f, 1, -1, 2, 0.25f, -0.5f}, bias[2] = {0.5f, -8};
    const int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sbias[1] = {2};
    rb_tensor *ta = NULL, *tb = NULL, *tbias = NULL, *mm = NULL, *y = NULL;
    CHECK(rb_tensor_from_host(NULL, a, sizeof a, sa, 2, RB_DTYPE_F32, &ta));
    CHECK(rb_tensor_from_host(NULL, b, sizeof b, sb, 2, RB_DTYPE_F32, &tb));
    CHECK(rb_tensor_from_host(NULL, bias, sizeof bias, sbias, 1, RB_DTYPE_F32, &tbias));
    CHECK(rb_matmul(NULL, ta, tb, &mm));
    CHECK(rb_add(NULL, mm, tbias, &y));
    CHECK(rb_relu(NULL, y, &y));
    float got[4];
    CHECK(rb_tensor_copy_to_host(y, got, sizeof got));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            float s = bias[j];
            for (int k = 0; k < 3; k++) s += a[i * 3 + k] * b[k * 2 + j];
            s = s > 0 ? s : 0;
            if (fabsf(s - got[i * 2 + j]) > 1e-5f) {
                fprintf(stderr, "y[%d][%d] = %g, expected %g\n", i, j, got[i * 2 + j], s);
                return 1;
            }
        }
    CHECK(rb_tensor_destroy(ta));
    CHECK(rb_tensor_destroy(tb));
    CHECK(rb_tensor_destroy(tbias));
    CHECK(rb_tensor_destroy(mm));
    CHECK(rb_tensor_destroy(y));
    printf("cmake consumer (%s library): rocm-backend %s, relu(a@b + bias) = [%g %g; %g %g]: ok\n",
           RB_CONSUMER_KIND, rb_version(), got[0], got[1], got[2], got[3]);
    return 0;
}
