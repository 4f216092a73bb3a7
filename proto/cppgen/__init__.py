"""The C++ codec generator behind proto/codegen.py, by concern.

    versions     version ranges ("3+", "1-4") and the C++ conditions they become
    cpp_types    the C++ type, default and nullability of a schema field
    schema       reading the JSON schemas: messages, their structs and fields
    headers      one header per message: the structs
    sources      one source per message: encode and decode
    api_table    the table of served APIs and the visitors over it
    random_fill  random message filler for the round-trip tests
"""
