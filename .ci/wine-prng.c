/* Wine 8, as Debian 12 ships it, lacks bcryptprimitives.dll, whose ProcessPrng the Rust standard
 * library draws its randomness from on Windows; so the Windows unit tests could not start under
 * it. This stands in for it, with the random source Wine does have. For .ci/run only. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    return RtlGenRandom(data, (ULONG)length);
}
