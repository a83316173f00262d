#include <broadphase/broadphase.h>
int main(void){return 0;}
