/* Wine 8 gap, not a project fix: Wine 8.0 has no bcryptprimitives.dll, and Go >= 1.22 programs
   (esbuild.exe, which tsx runs to compile the TypeScript tests) call its ProcessPrng at start.
   This stand-in fills the buffer from RtlGenRandom (advapi32's SystemFunction036), which Wine
   has. Built by .ci/windows-lane.sh with mingw-w64 into the throwaway Wine prefix only. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  const SIZE_T chunk = 1u << 28; /* RtlGenRandom takes a ULONG length */
  for (SIZE_T done = 0; done < length;) {
    ULONG n = (ULONG)(length - done < chunk ? length - done : chunk);
    if (!SystemFunction036(data + done, n)) return FALSE;
    done += n;
  }
  return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE instance, DWORD reason, LPVOID reserved) {
  (void)instance; (void)reason; (void)reserved;
  return TRUE;
}
