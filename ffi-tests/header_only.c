/* The header compiles on its own (and when included twice), as C and as C++. */
#include "tce.h"
#include "tce.h"

int main(void) {
    tce_estimate e = {0.0, 0, 0};
    (void)e;
    return TCE_STATUS_OK;
}
