// Compile-time comparison of a function signature as the Rust side declares it (written as a
// C++ function type by tests/amd/gen_conformance.py from src/device/gpu/vendor/hip.rs) with
// the real function in the ROCm headers.
//
// Rules (per parameter and for the return type):
//  - identical types match;
//  - an integer matches an integer of the same size and signedness; an enum matches an
//    integer or enum of the same size (Rust declares C enums such as hipError_t as c_int
//    aliases); `bool` only matches `bool`;
//  - floating types must be identical;
//  - pointers match when their pointees match, ignoring const/volatile (Rust *const/*mut);
//    a Rust `void*` (c_void) stands for any pointer to a class, union, enum or void (an
//    opaque handle such as ihipStream_t*, or a struct the Rust side passes as bytes), but
//    NOT for a pointer to a pointer or to an arithmetic type (that would hide a missing `*`);
//  - the parameter count must be equal.
#pragma once
#include <cstddef>
#include <type_traits>

namespace abi {

template <class R, class C, class = void> struct same;

template <class T> using bare = std::remove_cv_t<T>;
template <class T>
constexpr bool int_like = (std::is_integral_v<T> && !std::is_same_v<T, bool>) || std::is_enum_v<T>;

template <class R, class C> constexpr bool same_v = same<bare<R>, bare<C>>::value;

template <class R, class C, class> struct same {
    static constexpr bool value = [] {
        if constexpr (std::is_same_v<R, C>) {
            return true;
        } else if constexpr (std::is_integral_v<R> && std::is_integral_v<C>) {
            // Plain integers: same size and signedness (u32 for a C int is a bug even if
            // the registers agree).  `char` is signed on the Linux ABIs the checks run on.
            return int_like<R> && int_like<C> && sizeof(R) == sizeof(C) &&
                   std::is_signed_v<R> == std::is_signed_v<C>;
        } else if constexpr (int_like<R> && int_like<C>) {
            // A C enum declared on the Rust side as an integer alias: same size.
            return sizeof(R) == sizeof(C);
        } else if constexpr (std::is_pointer_v<R> && std::is_pointer_v<C>) {
            using RP = bare<std::remove_pointer_t<R>>;
            using CP = bare<std::remove_pointer_t<C>>;
            if constexpr (std::is_void_v<RP>) {
                return std::is_void_v<CP> || std::is_class_v<CP> || std::is_union_v<CP> ||
                       std::is_enum_v<CP> || std::is_function_v<CP>;
            } else {
                return same_v<RP, CP>;
            }
        } else {
            return false;
        }
    }();
};

template <class... T> struct pack {};
template <class A, class B> struct params_same : std::false_type {};
template <class... RA, class... CA> struct params_same<pack<RA...>, pack<CA...>> {
    static constexpr bool value = [] {
        if constexpr (sizeof...(RA) != sizeof...(CA)) {
            return false;
        } else {
            return (true && ... && same_v<RA, CA>);
        }
    }();
};

template <class A, class B> struct fn_same : std::false_type {};
template <class RR, class... RA, class CR, class... CA>
struct fn_same<RR (*)(RA...), CR (*)(CA...)> {
    static constexpr bool value = same_v<RR, CR> && params_same<pack<RA...>, pack<CA...>>::value;
};

// Index of the first mismatching parameter (for the diagnostic): -1 = return type,
// N = parameter count differs, -2 = all match.
template <class A, class B> struct first_mismatch { static constexpr int value = -3; };
template <class RR, class... RA, class CR, class... CA>
struct first_mismatch<RR (*)(RA...), CR (*)(CA...)> {
    static constexpr int value = [] {
        if constexpr (sizeof...(RA) != sizeof...(CA)) {
            return int(sizeof...(RA));
        } else {
            if (!same_v<RR, CR>) return -1;
            constexpr bool ok[] = {true, same_v<RA, CA>...};
            for (int i = 0; i < int(sizeof...(RA)); ++i)
                if (!ok[i + 1]) return i;
            return -2;
        }
    }();
};

}  // namespace abi

// Asserts that the Rust-side function type (a C++ function type, the variadic argument)
// matches &SYM in the headers.  On a mismatch the second assertion shows, in the compiler's
// "comparison reduces to (N == -2)" note, which parameter differs (-1: the return type; the
// Rust parameter count when the counts differ).
#define ABI_CHECK_FN(SYM, ...)                                                              \
    namespace abi_rs {                                                                      \
    using SYM = std::add_pointer_t<__VA_ARGS__>;                                            \
    }                                                                                       \
    static_assert(abi::fn_same<abi_rs::SYM, decltype(&::SYM)>::value,                       \
                  "hip.rs declares " #SYM " with a signature that does not match the ROCm " \
                  "header");                                                                 \
    static_assert(abi::first_mismatch<abi_rs::SYM, decltype(&::SYM)>::value == -2,          \
                  #SYM ": first mismatching parameter")

// Asserts that a Rust-side constant equals the header's value of the same name.
#define ABI_CHECK_VALUE(SYM, VALUE)                                                         \
    static_assert(static_cast<long long>(SYM) == static_cast<long long>(VALUE),            \
                  "hip.rs: " #SYM " = " #VALUE " but the ROCm header says otherwise")

// Asserts size and alignment of a Rust #[repr(C)] struct mirror against the header's type.
#define ABI_CHECK_SIZE(CTYPE, SIZE, ALIGN)                                                  \
    static_assert(sizeof(::CTYPE) == (SIZE) && alignof(::CTYPE) == (ALIGN),                 \
                  "hip.rs: size/alignment of " #CTYPE " differ from the ROCm header")

// Asserts a field offset the Rust side relies on.
#define ABI_CHECK_OFFSET(CTYPE, FIELD, OFFSET)                                              \
    static_assert(offsetof(::CTYPE, FIELD) == (OFFSET),                                     \
                  "hip.rs: offset of " #CTYPE "::" #FIELD " differs from the ROCm header")
