/* Wine 8 has no bcryptprimitives.dll, and Rust's standard library for Windows takes its
 * random numbers from ProcessPrng there. This stand-in, built with mingw-w64 and placed
 * beside tandem.exe for the wine suite only, answers ProcessPrng with RtlGenRandom
 * (advapi32's SystemFunction036), which wine has. Never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
