/* Classifies digits with a bundle whose weights live in a separate file. */
#define NET digits
#include "digits.h"
#include "classify.inc"

int main(int argc, char **argv) {
  uint8_t *constants = allocRegion(digits_CONSTANT_SIZE);
  FILE *f = fopen(digits_WEIGHTS_FILE, "rb");
  if (!constants || !f ||
      fread(constants, 1, digits_CONSTANT_SIZE, f) != digits_CONSTANT_SIZE) {
    fprintf(stderr, "cannot read %s\n", digits_WEIGHTS_FILE);
    return 1;
  }
  fclose(f);
  int rc = classifyAll(constants, argc, argv);
  free(constants);
  return rc;
}
