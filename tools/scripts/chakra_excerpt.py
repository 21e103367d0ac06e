#!/usr/bin/env python3
"""Cuts a small excerpt of a Chakra ET file: its GlobalMetadata and first N nodes, each node
without its `inputs` and `outputs` (fields 8 and 9: tensor ids and shapes, which hopsim does not
read), everything else byte for byte. Made tests/data/chakra/param-ddp.0.et from Chakra's own
test trace (tests/data/chakra/README.md).

Usage: chakra_excerpt.py IN.et OUT.et --nodes N
"""
import argparse


def varint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def messages(data):
    pos = 0
    while pos < len(data):
        length, pos = varint(data, pos)
        yield data[pos:pos + length]
        pos += length


def without_fields(message, dropped):
    """The message with every field whose number is in `dropped` left out."""
    out, pos = bytearray(), 0
    while pos < len(message):
        start = pos
        key, pos = varint(message, pos)
        wire = key & 7
        if wire == 0:
            _, pos = varint(message, pos)
        elif wire == 1:
            pos += 8
        elif wire == 2:
            length, pos = varint(message, pos)
            pos += length
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"wire type {wire} at byte {start}")
        if key >> 3 not in dropped:
            out += message[start:pos]
    return bytes(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--nodes", type=int, required=True)
    args = parser.parse_args()
    with open(args.input, "rb") as f:
        data = f.read()
    out = bytearray()
    for i, message in enumerate(messages(data)):
        if i > args.nodes:
            break
        kept = message if i == 0 else without_fields(message, {8, 9})
        out += encode_varint(len(kept)) + kept
    with open(args.output, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
