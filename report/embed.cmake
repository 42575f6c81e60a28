# embed.cmake - writes the text file IN as the C string constant NAME (and
# NAME_len) into OUT, so that the report's JavaScript and CSS are real files
# in the tree and still part of the one dlsim binary.
#   cmake -DIN=file.js -DOUT=file_js.c -DNAME=rp_asset_file_js -P embed.cmake
file(READ "${IN}" text)
# the page inlines these: a closing tag inside would end the element early
string(FIND "${text}" "</script" at_script)
string(FIND "${text}" "</style" at_style)
if(NOT at_script EQUAL -1 OR NOT at_style EQUAL -1)
  message(FATAL_ERROR "${IN}: contains </script or </style, which would end the inlined element")
endif()
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* generated from ${IN} by report/embed.cmake: edit that file, not this one */\n"
     "#include <stddef.h>\n"
     "const char ${NAME}[] = {\n${bytes}0x00};\n"
     "const size_t ${NAME}_len = sizeof(${NAME}) - 1;\n")
