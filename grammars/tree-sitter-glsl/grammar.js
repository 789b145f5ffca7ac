const C = require("tree-sitter-c/grammar")

module.exports = grammar(C, {
    name: 'lockstep_glsl',

    conflicts: ($, original) => original.concat([
        [$.function_definition, $.declaration],
        [$.declaration],
        [$.declaration, $.qualifier_declaration],
        [$.declaration, $.type_qualifier],
        [$.expression, $.array_type],
        [$._declarator, $.type_specifier, $.array_type],
        [$.type_specifier, $.expression, $.array_type],
        [$.type_specifier, $.array_type],
    ]),

    rules: {
        _top_level_item: ($, original) => choice(
            ...original.members.filter((member) => member.content?.name != '_old_style_function_definition'),
            $.preproc_extension,
            $.qualifier_declaration,
        ),

        _block_item: ($, original) => choice(
            ...original.members.filter((member) => member.content?.name != '_old_style_function_definition'),
            $.preproc_extension,
        ),

        function_definition: ($, original) => seq(
            optional(
                seq(
                    'subroutine',
                    optional(
                        seq('(', optional($.identifier), repeat(seq(',', $.identifier)), ')')
                    ),
                )
            )
            , original
        ),

        preproc_extension: $ => seq(
          field('directive', $.preproc_directive),
          field('extension', $.identifier),
          token.immediate(/[ \t]*:[ \t]*/),
          field('behavior', $.extension_behavior),
          token.immediate(/\r?\n/),
        ),

        extension_behavior: $ => choice("require", "enable", "warn", "disable"),

        declaration: ($, original) =>
            choice(seq(choice("invariant", "precise"), $.identifier, ";"), seq(
                repeat(
                    choice(
                        'in',
                        'out',
                        'inout',
                        'uniform',
                        'shared',
                        'attribute',
                        'varying',
                        'buffer',
                        'coherent',
                        'readonly',
                        'writeonly',
                        'restrict',
                        'volatile',
                        'precision',
                        'highp',
                        'mediump',
                        'lowp',
                        'subroutine',
                        'centroid',
                        'sample',
                        'patch',
                        'smooth',
                        'flat',
                        'noperspective',
                        'invariant',
                        'precise',
                        $.extension_storage_class,
                        $.layout_specification,
                    )
                ), choice(
                    seq($.identifier, $.field_declaration_list, optional(choice($.identifier, $.array_declarator)), ";"),
                    original
                )
            )),

        // Qualifiers that set a default for the shader's inputs or outputs,
        // with nothing declared: `layout(local_size_x = 64) in;`.
        qualifier_declaration: $ => seq($.layout_specification, repeat1(choice('in', 'out', 'uniform', 'buffer', 'shared')), ';'),

        field_declaration: ($, original) =>
            seq(
                repeat(choice(
                    'in',
                    'out',
                    'inout',
                    'uniform',
                    'shared',
                    'attribute',
                    'varying',
                    'buffer',
                    'coherent',
                    'readonly',
                    'writeonly',
                    'precision',
                    'highp',
                    'mediump',
                    'lowp',
                    'subroutine',
                    'centroid',
                    'sample',
                    'patch',
                    'smooth',
                    'flat',
                    'noperspective',
                    'invariant',
                    'precise',
                    $.extension_storage_class,
                    $.layout_specification,
                )), original),

        // GLSL writes a parameter's qualifiers in any order, `const` among
        // them (`const in uint i`); C's `const` comes with the type.
        parameter_declaration: ($, original) =>
            seq(
                repeat($._parameter_qualifier),
                optional(seq('const', repeat1($._parameter_qualifier))),
                original
            ),

        _parameter_qualifier: $ => choice(
            'in',
            'out',
            'inout',
            'uniform',
            'shared',
            'attribute',
            'varying',
            'buffer',
            'coherent',
            'readonly',
            'writeonly',
            'centroid',
            'sample',
            'patch',
            'smooth',
            'flat',
            'noperspective',
            'precise',
            'highp',
            'mediump',
            'lowp',
            $.layout_specification,
        ),

        // An array type (`uint[4] x;`, `float[2](a, b)`): GLSL may size an
        // array at its type as well as at its name.
        type_specifier: ($, original) => choice(original, $.array_type, $.parameterized_type),

        // The types GLSL extensions give parameters (GL_KHR_cooperative_matrix's
        // `coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>`,
        // GL_NV_cooperative_matrix2's `tensorLayoutNV<2>`), by name: GLSL has
        // no templates, so `<` after any other name stays a comparison.
        parameterized_type: $ => seq(
            field('name', alias(choice('coopmat', 'tensorLayoutNV', 'tensorViewNV'), $.type_identifier)),
            field('arguments', $.type_parameter_list),
        ),

        type_parameter_list: $ => seq(
            '<',
            optional(seq($._type_parameter, repeat(seq(',', $._type_parameter)))),
            '>',
        ),

        _type_parameter: $ => choice($.primitive_type, $.identifier, $.number_literal, $.true, $.false, $.parenthesized_expression),

        array_type: $ => seq(
            field('element', choice($.primitive_type, $._type_identifier, $.array_type)),
            '[',
            field('size', optional($.expression)),
            ']',
        ),

        extension_storage_class: _ => choice(
            'rayPayloadEXT',
            'rayPayloadInEXT',
            'hitAttributeEXT',
            'callableDataEXT',
            'callableDataInEXT',
            'shaderRecordEXT',
            'rayPayloadNV',
            'rayPayloadInNV',
            'hitAttributeNV',
            'callableDataNV',
            'callableDataInNV',
            'shaderRecordNV',
        ),

        // A constructor named by a C primitive type (`float(x)`, `uint32_t(x)`):
        // after `(` C would lex the type as the start of a cast.
        call_expression: ($, original) => choice(
            original,
            prec(15, seq(field('function', choice($.primitive_type, $.array_type, $.parameterized_type)), field('arguments', $.argument_list))),
        ),

        layout_specification: ($) => seq("layout", $.layout_qualifiers),
        layout_qualifiers: ($) => seq("(", $.qualifier, repeat(seq(",", $.qualifier)), ")"),
        qualifier: ($) => choice("shared", $.identifier, seq($.identifier, "=", $.expression)),
    }
});
