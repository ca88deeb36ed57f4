/* Classifies digits with a bundle that embeds its weights. */
#define NET digits_emb
#include "digits_emb.h"
#include "classify.inc"

int main(int argc, char **argv) { return classifyAll(NULL, argc, argv); }
