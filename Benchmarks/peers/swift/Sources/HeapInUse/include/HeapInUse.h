#include <stddef.h>

/// The bytes the C heap holds for the program: glibc's mallinfo2 (in-use arena bytes plus mmapped blocks); 0 elsewhere.
size_t heap_bytes_in_use(void);
