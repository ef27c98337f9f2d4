// SPDX-License-Identifier: GPL-2.0
/*
 * rvs_rs.ko's C helpers: rvs.ko's own (rvs/helpers.c), compiled again into
 * the companion module, which shares the wrapper layer (rvs/sys/), without
 * rvs.ko's module parameters.
 */
#define RVS_COMPANION
#include "helpers.c"
