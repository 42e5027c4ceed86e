/* libmpiguide-dt: a portable datatype engine on top of any MPI library.
 *
 * It decodes an MPI datatype (MPI_Type_get_envelope/get_contents), rewrites it
 * into a normalized form, compiles that into a small loop program, and packs or
 * unpacks any byte range of the packed stream. It can hand the normalized form
 * back as an MPI datatype (mg_dt_to_mpi) and print it (mg_dt_describe) in the
 * notation that mg_dt_parse and `mpiguide dt explain` accept.
 *
 * Packed bytes are the data bytes in typemap order with no conversion, which is
 * what MPI_Pack produces on a homogeneous system. Every function returns an
 * error code (MG_DT_SUCCESS or one of MG_DT_ERR_*); mg_dt_strerror explains it.
 * Nothing in the library prints, aborts, or keeps global state.
 */
#ifndef MPIGUIDE_DT_H
#define MPIGUIDE_DT_H

#include <mpi.h>
#include <stddef.h>

/* What libmpiguide-dt exports: the functions below; everything else is hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define MG_DT_API __attribute__((visibility("default")))
#else
#define MG_DT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MG_DT_SUCCESS = 0,
    MG_DT_ERR_ARG,         /* NULL pointer, MPI_DATATYPE_NULL, negative count */
    MG_DT_ERR_OFFSET,      /* offset outside the packed stream */
    MG_DT_ERR_NOMEM,       /* allocation failed */
    MG_DT_ERR_MPI,         /* an MPI call failed */
    MG_DT_ERR_UNSUPPORTED, /* a combiner or named type the engine cannot decode */
    MG_DT_ERR_OVERFLOW,    /* sizes or displacements do not fit MPI_Count/MPI_Aint */
    MG_DT_ERR_PARSE,       /* mg_dt_parse: the text is not a type in the notation */
    MG_DT_ERR_TRUNCATED,   /* output text did not fit; it was cut */
    MG_DT_ERR_COUNT_       /* number of codes; not an error */
};

typedef struct mg_dt mg_dt;

/* Message for an error code; never NULL. */
MG_DT_API const char *mg_dt_strerror(int code);

/* Decode, normalize and compile. The type may be committed or not; it is not
 * modified and may be freed afterwards. */
MG_DT_API int mg_dt_from_mpi(MPI_Datatype type, mg_dt **out);
MG_DT_API void mg_dt_free(mg_dt *t);

/* Properties of one element, as MPI reports them for the decoded type. */
MG_DT_API MPI_Count mg_dt_size(const mg_dt *t); /* packed bytes per element */
MG_DT_API MPI_Count mg_dt_extent(const mg_dt *t);
MG_DT_API MPI_Count mg_dt_lb(const mg_dt *t);
/* Number of contiguous blocks of one element after normalization. */
MG_DT_API MPI_Count mg_dt_blocks(const mg_dt *t);

/* 1 if all basic elements of t are of one type, so that the types
 * mg_dt_to_mpi builds carry t's type signature; 0 if t mixes element types,
 * which the normal form merges into bytes where they touch (the same bytes,
 * but another signature: such a type must not meet a typed peer). */
MG_DT_API int mg_dt_same_signature(const mg_dt *t);

/* Pack bytes [offset, offset + *actual) of the stream of `incount` elements read
 * from inbuf; *actual = min(max_bytes, incount * size - offset). */
MG_DT_API int mg_dt_pack(const mg_dt *t, const void *inbuf, MPI_Count incount, MPI_Count offset, void *outbuf,
                         MPI_Count max_bytes, MPI_Count *actual);
/* inbuf holds bytes [offset, offset + in_bytes) of the stream; scatter them into
 * outbuf laid out as `outcount` elements. *actual = bytes consumed. */
MG_DT_API int mg_dt_unpack(const mg_dt *t, const void *inbuf, MPI_Count in_bytes, MPI_Count offset, void *outbuf,
                           MPI_Count outcount, MPI_Count *actual);

/* A cursor continues a pack or unpack where the previous call stopped at O(1)
 * cost (mg_dt_pack with an offset seeks, which is logarithmic in the blocks).
 * The mg_dt must outlive the cursor. */
typedef struct mg_dt_cursor mg_dt_cursor;
MG_DT_API int mg_dt_cursor_create(const mg_dt *t, MPI_Count count, MPI_Count offset, mg_dt_cursor **out);
MG_DT_API int mg_dt_cursor_pack(mg_dt_cursor *c, const void *inbuf, void *outbuf, MPI_Count max_bytes,
                                MPI_Count *actual);
MG_DT_API int mg_dt_cursor_unpack(mg_dt_cursor *c, const void *inbuf, MPI_Count in_bytes, void *outbuf,
                                  MPI_Count *actual);
MG_DT_API MPI_Count mg_dt_cursor_offset(const mg_dt_cursor *c);
MG_DT_API void mg_dt_cursor_free(mg_dt_cursor *c);

/* A committed datatype for `count` elements of t in normalized form: one element
 * of *out moves the same bytes in the same order as `count` elements of t. Its
 * lb and extent are those of MPI_Type_contiguous(count, t). The caller frees it.
 * The form is AUTO's (below): the one measured best on the MPI library running. */
MG_DT_API int mg_dt_to_mpi(const mg_dt *t, MPI_Count count, MPI_Datatype *out);

/* The forms of count elements of t that mg_dt_to_mpi can build (the same type
 * map, lb and extent): VECTOR, every repetition of the normal form as
 * MPI_Type_vector/hvector; RESIZED, the outermost repetitions (of the type,
 * and of each member of an outermost struct) as MPI_Type_contiguous of their
 * element resized to the stride, as an array of a resized type is built;
 * LIST, all blocks in one MPI_Type_create_hindexed(_block) list where the
 * type has one element type and many small blocks, none of them half the
 * data (else VECTOR); COPIES,
 * MPI_Type_contiguous(count, one element's form) for count > 1 (positive
 * extents), and a period whose copies join into longer blocks (a head, a
 * vector of joined blocks, a tail) as copies of the period (else VECTOR).
 * MPI libraries differ in which they move fastest; AUTO chooses per element
 * by the form policy measured best for the MPI library running
 * (mg_dt_form_policy_for). */
enum { MG_DT_FORM_AUTO = 0, MG_DT_FORM_VECTOR, MG_DT_FORM_RESIZED, MG_DT_FORM_LIST, MG_DT_FORM_COPIES };
MG_DT_API int mg_dt_to_mpi_form(const mg_dt *t, MPI_Count count, int form, MPI_Datatype *out);
/* The form of a name: "auto", "vector", "resized", "list" or "copies";
 * MG_DT_ERR_ARG for any other. mg_dt_form_name: the other way ("?" for no
 * form). */
MG_DT_API int mg_dt_form_parse(const char *name, int *form);
MG_DT_API const char *mg_dt_form_name(int form);

/* How AUTO chooses a form: elements and periods of repeat_from bytes and more
 * (0: never) as COPIES; else, for data below list_below bytes (-1: any size;
 * 0: never), a plain vector of blocks of resized_block to resized_max bytes
 * as RESIZED (0: never), else many small blocks as LIST where a list fits;
 * otherwise `base` (VECTOR, RESIZED, LIST or COPIES). A policy of base alone
 * (the sizes 0) builds that form, as mg_dt_to_mpi_form does. */
typedef struct {
    int base;
    MPI_Count list_below;
    MPI_Count resized_block, resized_max;
    MPI_Count repeat_from;
} mg_dt_form_policy;
/* The policy measured best on the MPI library whose MPI_Get_library_version
 * text is `library_version` (NULL: the library running), from the engine's
 * table of MPI families (docs/dt-engine.md has the measurements); a library
 * the table does not know gets VECTOR with lists at any size. */
MG_DT_API int mg_dt_form_policy_for(const char *library_version, mg_dt_form_policy *out);
/* mg_dt_to_mpi with the caller's policy (MG_DT_ERR_ARG for one outside the
 * ranges above). */
MG_DT_API int mg_dt_to_mpi_policy(const mg_dt *t, MPI_Count count, const mg_dt_form_policy *policy,
                                  MPI_Datatype *out);

/* Form classes: which kinds of step an MPI datatype is built of, so that a
 * caller can ask whether the MPI library running moves each kind right before
 * it hands the library a type (libmpiguide-tune does for every normal type,
 * docs/dt-engine.md, "MPI library bugs"). A step goes from the data of one
 * piece (a copy of the inner type) to the next in typemap order:
 *   step  MG_DT_FC_INNER between the copies inside one block (the inner
 *         type's extent), MG_DT_FC_BLOCK between blocks of one piece,
 *         MG_DT_FC_MULTI between blocks of several pieces;
 *   size  against the data the step leaves behind (a piece's or a block's
 *         true extent): MG_DT_FC_ZERO, MG_DT_FC_BYTE (as many bytes as the
 *         block has pieces, 1 after one piece, and less than that data),
 *         MG_DT_FC_OVERLAP, MG_DT_FC_DENSE (exactly it), MG_DT_FC_GAP;
 *         MG_DT_FC_EMPTY: a block or a piece without data;
 *   negative, odd (not a multiple of the element's size: overlaps and gaps),
 *   derived (the pieces are derived types, else basic elements), and the
 *   basic element. */
enum {
    MG_DT_FC_CONTIG,
    MG_DT_FC_VECTOR,
    MG_DT_FC_HVECTOR,
    MG_DT_FC_INDEXED_BLOCK,
    MG_DT_FC_HINDEXED_BLOCK,
    MG_DT_FC_INDEXED,
    MG_DT_FC_HINDEXED,
    MG_DT_FC_STRUCT
};
enum { MG_DT_FC_INNER, MG_DT_FC_BLOCK, MG_DT_FC_MULTI };
enum { MG_DT_FC_ZERO, MG_DT_FC_BYTE, MG_DT_FC_OVERLAP, MG_DT_FC_DENSE, MG_DT_FC_GAP, MG_DT_FC_EMPTY };
typedef struct {
    int ctor, step, size, negative, odd, derived;
    MPI_Datatype elem;
} mg_dt_form_class;
/* The distinct classes of `type` (and, with `repeated`, of count > 1 of it:
 * copies one extent apart) into out[0..max) and their number in *n; where
 * they do not fit, MG_DT_ERR_TRUNCATED and in *n a room that is enough.
 * MG_DT_ERR_UNSUPPORTED for subarray, darray and other combiners mg_dt_to_mpi
 * never builds. */
MG_DT_API int mg_dt_form_classes(MPI_Datatype type, int repeated, mg_dt_form_class *out, int max, int *n);
/* A number below MG_DT_FORM_CLASSES for each class but its element (-1 for
 * none), for tables of verdicts. */
#define MG_DT_FORM_CLASSES 1152
MG_DT_API int mg_dt_form_class_index(const mg_dt_form_class *c);
/* "hvector block step 1-byte-per-piece of int": what the class is. */
MG_DT_API int mg_dt_form_class_name(const mg_dt_form_class *c, char *buf, size_t len);
/* The class's canonical instance in the notation: three blocks of the class's
 * constructor a step of that kind apart (or one block of three pieces), e.g.
 * "hvector(count=3, block=1, stride=1, int)"; MG_DT_ERR_UNSUPPORTED where no
 * such instance exists. */
MG_DT_API int mg_dt_form_class_instance(const mg_dt_form_class *c, char *buf, size_t len);
/* Builds the canonical instance (mg_dt_parse) and packs one element of it
 * with MPI_Pack and with the engine, and where its pieces do not overlap
 * unpacks the engine's stream with MPI_Unpack and the engine: *right is 1 if
 * MPI gave the same bytes (an MPI error counts as wrong; errors are returned on
 * MPI_COMM_SELF meanwhile). Deterministic: the same class on the same library
 * gets the same answer in every process. */
MG_DT_API int mg_dt_form_class_probe(const mg_dt_form_class *c, int *right);

/* The normalized form of one element (mg_dt_describe) or of `count` elements
 * (count-aware: mg_dt_to_mpi's type map, in the VECTOR form) in the type
 * notation. Returns MG_DT_ERR_TRUNCATED (text cut, still NUL-terminated) if
 * len is too small. */
MG_DT_API int mg_dt_describe(const mg_dt *t, char *buf, size_t len);
MG_DT_API int mg_dt_describe_count(const mg_dt *t, MPI_Count count, char *buf, size_t len);
/* mg_dt_describe without shortening long lists (mg_dt_describe shows the first
 * entries of a list of more than 64 and its length, which is for reading and
 * does not parse back): text that mg_dt_parse rebuilds the type from. */
MG_DT_API int mg_dt_describe_full(const mg_dt *t, char *buf, size_t len);
/* The constructors of the normalized form from the outside in, joined by '/'
 * ("resized/hvector/indexed"; up to the first struct): the shape datatype
 * profiles of libmpiguide-tune match. The same on every stack. */
MG_DT_API int mg_dt_shape(const mg_dt *t, char *buf, size_t len);
/* The bytes of one element over its contiguous blocks after normalization
 * (rounded down; 0 if it holds no data): the other key of those rules, which
 * tells layouts of one shape apart by how long their blocks are. */
MG_DT_API MPI_Count mg_dt_mean_block(const mg_dt *t);

/* The compiled loop program of `count` elements, one primitive per line. */
MG_DT_API int mg_dt_program(const mg_dt *t, MPI_Count count, char *buf, size_t len);

/* Call fn for every contiguous block of `count` elements in typemap order
 * (displacement from the buffer address, length in bytes) after count-aware
 * normalization; a non-zero return from fn stops the walk and is returned. */
MG_DT_API int mg_dt_walk(const mg_dt *t, MPI_Count count, int (*fn)(MPI_Aint disp, MPI_Count len, void *arg),
                         void *arg);

/* Build an (uncommitted) MPI datatype from the notation, e.g.
 * "vector(count=4, block=2, stride=6, int)". On error, errbuf (if given) says
 * what is wrong and at which character. A bare basic name gives a dup of the
 * predefined type, so the caller always frees *out. */
MG_DT_API int mg_dt_parse(const char *text, MPI_Datatype *out, char *errbuf, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
