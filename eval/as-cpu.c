/*
 * LD_PRELOAD library for eval/as-cpu.sh: hides CPU features from the
 * `cpuid` instruction, so engines that pick kernels by cpuid (ours, ONNX
 * Runtime, candle's gemm) run the kernels of a CPU without them, on the same
 * cores. Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID) makes every
 * `cpuid` raise SIGSEGV; the handler runs the real instruction with faulting
 * off, clears the hidden bits and steps over it. The setting is inherited by
 * threads and children, and ends at execve.
 *
 * AS_CPU=avx-vnni hides AVX-512 and AMX (an Alder Lake-class CPU: AVX2, FMA,
 * AVX-VNNI); AS_CPU=avx2 hides AVX-VNNI too.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <cpuid.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

static int hide_avx_vnni;

static void on_segv(int sig, siginfo_t *info, void *context) {
  (void)sig;
  (void)info;
  ucontext_t *uc = context;
  greg_t *r = uc->uc_mcontext.gregs;
  const unsigned char *ip = (const unsigned char *)r[REG_RIP];
  if (ip[0] != 0x0f || ip[1] != 0xa2) {
    /* A real fault: let it happen again with the default action. */
    signal(SIGSEGV, SIG_DFL);
    return;
  }
  unsigned leaf = (unsigned)r[REG_RAX], sub = (unsigned)r[REG_RCX];
  unsigned a, b, c, d;
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
  __cpuid_count(leaf, sub, a, b, c, d);
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
  if (leaf == 7 && sub == 0) {
    /* avx512 f dq ifma pf er cd bw vl */
    b &= ~(BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31));
    /* avx512 vbmi vbmi2 vnni bitalg vpopcntdq */
    c &= ~(BIT(1) | BIT(6) | BIT(11) | BIT(12) | BIT(14));
    /* avx512 4vnniw 4fmaps vp2intersect; amx bf16; avx512 fp16; amx tile int8 */
    d &= ~(BIT(2) | BIT(3) | BIT(8) | BIT(22) | BIT(23) | BIT(24) | BIT(25));
  }
  if (leaf == 7 && sub == 1) {
    a &= ~BIT(5); /* avx512 bf16 */
    if (hide_avx_vnni)
      a &= ~BIT(4);
  }
  r[REG_RAX] = a;
  r[REG_RBX] = b;
  r[REG_RCX] = c;
  r[REG_RDX] = d;
  r[REG_RIP] += 2;
}

__attribute__((constructor)) static void start_hiding(void) {
  const char *as = getenv("AS_CPU");
  hide_avx_vnni = as && strcmp(as, "avx2") == 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  if (sigaction(SIGSEGV, &sa, NULL) != 0 ||
      syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
    fprintf(stderr, "as-cpu: this kernel or CPU has no CPUID faulting; nothing is hidden\n");
    exit(3);
  }
}
