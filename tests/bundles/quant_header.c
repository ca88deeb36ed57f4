/* quant_header.c - reads the quantization macros of a bundle header.
 *
 * Compiled with -include qnet.h for the model quant_header_test.sh makes:
 * input x u8 [1,4] per tensor (scale 0.5, zero point 128), input w i8
 * [3,2] per axis 0 (scales 0.25, 0.5, 0.125, zero points 0, 1, -1), output
 * y i8 [1,4] per tensor (scale 0.125, zero point -3), output z float.
 * Returns 0 when the header states exactly those, 1 and a line otherwise.
 */
#include <stdio.h>

static int fails;

static void expect(int ok, const char *what) {
  if (!ok) {
    printf("FAIL: %s\n", what);
    fails++;
  }
}

int main(void) {
  static const float wScales[] = qnet_w_SCALES;
  static const int wZeros[] = qnet_w_ZERO_POINTS;
  expect(qnet_x_ELEM_KIND == 2 && qnet_w_ELEM_KIND == 3 &&
             qnet_y_ELEM_KIND == 3,
         "ELEM_KIND: uint8 2, int8 3");
  expect(qnet_x_SCALE == 0.5f && qnet_x_ZERO_POINT == 128, "x per tensor");
  expect(qnet_y_SCALE == 0.125f && qnet_y_ZERO_POINT == -3, "y per tensor");
  expect(qnet_w_QUANT_AXIS == 0, "w axis");
  expect(sizeof(wScales) / sizeof(wScales[0]) == 3 &&
             sizeof(wZeros) / sizeof(wZeros[0]) == 3,
         "w: three scales and zero points");
  expect(wScales[0] == 0.25f && wScales[1] == 0.5f && wScales[2] == 0.125f,
         "w scales");
  expect(wZeros[0] == 0 && wZeros[1] == 1 && wZeros[2] == -1, "w zero points");
#ifdef qnet_z_SCALE
  expect(0, "z (float) has no scale");
#endif
#ifdef qnet_x_QUANT_AXIS
  expect(0, "x (per tensor) has no axis");
#endif
  return fails != 0;
}
