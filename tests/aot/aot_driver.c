/* A C program around an exported library (tests/aot/test_aot.py): reads each input from the
 * file named by its argument, runs the function, writes each output to the next file.
 * Compiled with -DHEADER='"<dir>/<name>.h"' -DFN=<name> -DUFN=<NAME>; with -DROUTINES it
 * takes the BLAS and LAPACK routines from the libraries it is linked with. */
#include <stdio.h>
#include <stdlib.h>
#include HEADER
#ifdef ROUTINES
#include <dlfcn.h>
#endif
#define CAT(a, b) a##b
#define XCAT(a, b) CAT(a, b)
#define INPUTS XCAT(UFN, _INPUT_COUNT)
#define OUTPUTS XCAT(UFN, _OUTPUT_COUNT)

int main(int argc, char **argv) {
    const void *inputs[INPUTS + 1];
    void *outputs[OUTPUTS + 1];
    int arg = 1;
    if (argc != 1 + INPUTS + OUTPUTS) {
        fprintf(stderr, "usage: %s INPUT... OUTPUT...\n", argv[0]);
        return 3;
    }
#ifdef ROUTINES
    for (int i = 0; i < XCAT(UFN, _ROUTINE_COUNT); i++) {
        XCAT(FN, _routines)[i] = dlsym(RTLD_DEFAULT, XCAT(UFN, _ROUTINE_NAMES)[i]);
    }
#endif
    for (int i = 0; i < INPUTS; i++, arg++) {
        size_t n = XCAT(UFN, _INPUT_BYTES)[i];
        void *p = malloc(n ? n : 1);
        FILE *f = fopen(argv[arg], "rb");
        if (p == NULL || f == NULL || fread(p, 1, n, f) != n) {
            fprintf(stderr, "cannot read %s\n", argv[arg]);
            return 3;
        }
        fclose(f);
        inputs[i] = p;
    }
    for (int i = 0; i < OUTPUTS; i++) {
        outputs[i] = malloc(XCAT(UFN, _OUTPUT_BYTES)[i] + 1);
    }
    int status = XCAT(FN, _run)(inputs, outputs);
    if (status != 0) {
        fprintf(stderr, "the run returned %d\n", status);
        return 4;
    }
    for (int i = 0; i < OUTPUTS; i++, arg++) {
        FILE *f = fopen(argv[arg], "wb");
        if (f == NULL || fwrite(outputs[i], 1, XCAT(UFN, _OUTPUT_BYTES)[i], f) != XCAT(UFN, _OUTPUT_BYTES)[i]) {
            fprintf(stderr, "cannot write %s\n", argv[arg]);
            return 3;
        }
        fclose(f);
    }
    return 0;
}
