// SPDX-License-Identifier: MIT
// PNG encoding for `bp render`: rows filtered with "Up" (a row equal to the one above becomes
// zeros), then deflated as literals plus distance-1 runs in one fixed-Huffman block.
#include "png.h"

#include <stdlib.h>
#include <string.h>

// ---- checksums ---------------------------------------------------------------------

uint32_t png_crc32(uint32_t crc, const uint8_t *data, size_t size)
{
	// The table is rebuilt per call (2K steps) rather than kept in a static that
	// two threads could race to fill; calls are per chunk, a MiB of data each.
	uint32_t table[256];
	for (uint32_t n = 0; n < 256; ++n) {
		uint32_t c = n;
		for (int k = 0; k < 8; ++k)
			c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		table[n] = c;
	}
	crc = ~crc;
	for (size_t i = 0; i < size; ++i)
		crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
	return ~crc;
}

uint32_t png_adler32(uint32_t adler, const uint8_t *data, size_t size)
{
	uint32_t a = adler & 0xFFFF, b = adler >> 16;
	while (size) {
		// 5552 is the largest block for which b cannot overflow 32 bits (zlib's NMAX).
		size_t block = size < 5552 ? size : 5552;
		for (size_t i = 0; i < block; ++i) {
			a += data[i];
			b += a;
		}
		a %= 65521;
		b %= 65521;
		data += block;
		size -= block;
	}
	return (b << 16) | a;
}

// ---- chunks ------------------------------------------------------------------------

/// The IDAT payload is flushed in chunks of this size.
#define IDAT_BYTES (1u << 20)

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static bool write_chunk(FILE *file, const char type[4], const uint8_t *data, uint32_t size)
{
	uint8_t head[8], tail[4];
	put_be32(head, size);
	memcpy(head + 4, type, 4);
	uint32_t crc = png_crc32(0, head + 4, 4);
	crc = png_crc32(crc, data, size);
	put_be32(tail, crc);
	return fwrite(head, 1, 8, file) == 8 && (size == 0 || fwrite(data, 1, size, file) == size) &&
		fwrite(tail, 1, 4, file) == 4;
}

// ---- the zlib stream, written into IDAT chunks as it fills ------------------------

typedef struct zstream {
	FILE *file;
	uint8_t *buffer; ///< IDAT_BYTES + slack for one code
	uint32_t used;
	uint64_t bits;   ///< pending bits, LSB first as deflate packs them
	int bit_count;
	uint32_t adler;
	bool ok;
	uint16_t code[288];   ///< fixed literal/length codes, bit-reversed for the LSB-first stream
	uint8_t length[288];
} zstream;

static void flush_chunk(zstream *z)
{
	if (z->ok && z->used)
		z->ok = write_chunk(z->file, "IDAT", z->buffer, z->used);
	z->used = 0;
}

static inline void put_byte(zstream *z, uint8_t byte)
{
	z->buffer[z->used++] = byte;
	if (z->used == IDAT_BYTES)
		flush_chunk(z);
}

static inline void put_bits(zstream *z, uint32_t value, int count)
{
	z->bits |= (uint64_t)value << z->bit_count;
	z->bit_count += count;
	while (z->bit_count >= 8) {
		put_byte(z, (uint8_t)z->bits);
		z->bits >>= 8;
		z->bit_count -= 8;
	}
}

static void align_byte(zstream *z)
{
	if (z->bit_count > 0)
		put_bits(z, 0, 8 - z->bit_count);
}

/// The fixed literal/length code of RFC 1951 §3.2.6, reversed once per file
/// rather than per symbol: 8192^2 pixels of 1M boxes took 17.4 s with per-symbol reversal.
static void fixed_codes(zstream *z)
{
	for (uint32_t symbol = 0; symbol < 288; ++symbol) {
		uint32_t code, length;
		if (symbol < 144)
			code = 0x30 + symbol, length = 8;
		else if (symbol < 256)
			code = 0x190 + symbol - 144, length = 9;
		else if (symbol < 280)
			code = symbol - 256, length = 7;
		else
			code = 0xC0 + symbol - 280, length = 8;
		uint32_t reversed = 0;
		for (uint32_t i = 0; i < length; ++i)
			reversed |= ((code >> i) & 1u) << (length - 1 - i);
		z->code[symbol] = (uint16_t)reversed;
		z->length[symbol] = (uint8_t)length;
	}
}

static inline void put_symbol(zstream *z, uint32_t symbol)
{
	put_bits(z, z->code[symbol], z->length[symbol]);
}

static const uint16_t length_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59,
	67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5,
	5, 5, 5, 0};

/// A copy of `length` (3..258) bytes from distance 1: the previous byte repeated.
static void put_run(zstream *z, uint32_t length)
{
	int code = 28;
	while (length_base[code] > length)
		--code;
	put_symbol(z, 257 + (uint32_t)code);
	if (length_extra[code])
		put_bits(z, length - length_base[code], length_extra[code]);
	put_bits(z, 0, 5); // distance code 0 (distance 1, no extra bits): 00000 reads the same reversed
}

/// Deflates one filtered row (filter byte first). `previous` is the last byte
/// written before it, or -1 at the start of the stream; runs only continue the
/// byte just emitted, so rows can be coded one at a time.
static void deflate_rle(zstream *z, const uint8_t *data, size_t size, int *previous)
{
	size_t i = 0;
	while (i < size) {
		if (*previous == data[i]) {
			size_t run = 1;
			while (run < 258 && i + run < size && data[i + run] == data[i])
				++run;
			if (run >= 3) {
				put_run(z, (uint32_t)run);
				i += run;
				continue;
			}
		}
		put_symbol(z, data[i]);
		*previous = data[i];
		++i;
	}
}

/// Stored blocks hold at most 65535 bytes each.
static void deflate_stored(zstream *z, const uint8_t *data, size_t size, bool last)
{
	do {
		uint32_t block = size < 65535 ? (uint32_t)size : 65535;
		bool final = last && block == size;
		put_bits(z, final ? 1u : 0u, 1);
		put_bits(z, 0, 2);
		align_byte(z);
		put_bits(z, block, 16);
		put_bits(z, ~block & 0xFFFFu, 16);
		for (uint32_t i = 0; i < block; ++i)
			put_byte(z, data[i]);
		data += block;
		size -= block;
	} while (size);
}

bool png_write_rgb(FILE *file, const uint8_t *rgb, uint32_t width, uint32_t height, png_deflate deflate)
{
	static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
	if (width == 0 || height == 0 || width > 0x7FFFFFFFu / 3 - 1)
		return false;
	size_t stride = (size_t)width * 3;
	uint8_t ihdr[13];
	put_be32(ihdr, width);
	put_be32(ihdr + 4, height);
	ihdr[8] = 8;   // bit depth
	ihdr[9] = 2;   // colour type: RGB
	ihdr[10] = 0;  // deflate
	ihdr[11] = 0;  // adaptive filtering, one filter byte per row
	ihdr[12] = 0;  // not interlaced
	if (fwrite(signature, 1, 8, file) != 8 || !write_chunk(file, "IHDR", ihdr, 13))
		return false;

	zstream z = {.file = file, .buffer = malloc(IDAT_BYTES + 16), .adler = 1, .ok = true};
	fixed_codes(&z);
	uint8_t *row = malloc(stride + 1);
	if (!z.buffer || !row) {
		free(z.buffer);
		free(row);
		return false;
	}
	put_byte(&z, 0x78); // CMF: deflate, 32 KiB window
	put_byte(&z, 0x01); // FLG: no dictionary, fastest; (0x78 * 256 + 0x01) % 31 == 0
	if (deflate == PNG_DEFLATE_RLE) {
		put_bits(&z, 1, 1); // BFINAL: the only block
		put_bits(&z, 1, 2); // BTYPE 01: fixed Huffman
	}
	int previous = -1;
	for (uint32_t y = 0; y < height && z.ok; ++y) {
		const uint8_t *line = rgb + stride * y;
		if (deflate == PNG_DEFLATE_RLE && y > 0) {
			// Up: most rows repeat the one above outside box edges, so they
			// become zeros and collapse into runs.
			const uint8_t *above = line - stride;
			row[0] = 2;
			for (size_t i = 0; i < stride; ++i)
				row[1 + i] = (uint8_t)(line[i] - above[i]);
		} else {
			row[0] = 0;
			memcpy(row + 1, line, stride);
		}
		z.adler = png_adler32(z.adler, row, stride + 1);
		if (deflate == PNG_DEFLATE_RLE)
			deflate_rle(&z, row, stride + 1, &previous);
		else
			deflate_stored(&z, row, stride + 1, y + 1 == height);
	}
	if (deflate == PNG_DEFLATE_RLE)
		put_symbol(&z, 256); // end of block
	align_byte(&z);
	for (int shift = 24; shift >= 0; shift -= 8)
		put_byte(&z, (uint8_t)(z.adler >> shift));
	flush_chunk(&z);
	bool ok = z.ok && write_chunk(file, "IEND", NULL, 0);
	free(z.buffer);
	free(row);
	return ok;
}
